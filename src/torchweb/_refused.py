"""PyTorch names torchweb refuses, each with the reason a user needs.

A refused name is not there (`hasattr` is False, so code that probes for a feature takes its
fallback, as it does on a PyTorch build without it), but asking for it raises an AttributeError
that says why and what to use instead: through a module-level `__getattr__` (PEP 562) for the
modules, and a descriptor for Tensor methods (a Tensor `__getattr__` would slow every attribute
read). scripts/api_census.py counts these as *refused*; tests/test_api_census.py checks each.
"""

import re

REASONS = {
    "quantization": "quantized tensors and their kernels are not part of torchweb (WebGPU kernels "
                    "here compute in float32/float16/int32); keep the model in float32 or float16",
    "vendor": "a kernel of one PyTorch backend (cuDNN, MIOpen, MKL-DNN, FBGEMM, ...) or an ATen "
              "internal; call the public op (e.g. torch.nn.functional.*) instead",
    "jit": "TorchScript's compiler internals are not part of torchweb; torch.compile captures "
           "and replays instead",
    "symbolic": "symbolic shapes belong to torch.fx/Dynamo tracing, which torchweb does not have",
    "storage": "torchweb tensors keep their data in device buffers, without PyTorch's Storage "
               "classes; use tensors (torch.save/load handle checkpoints)",
    "dtype": "this dtype is not supported on WebGPU; use torch.float32, float16, int32, int64, "
             "uint8 or bool",
    "linalg": "this linear-algebra routine is not implemented by torchweb; torch.linalg has the "
              "decompositions and solvers (docs/linalg.md)",
    "linalg_removed": "removed from PyTorch 2 (it raises there too); use torch.linalg.solve, lstsq, "
                      "eigh, eig or matrix_rank",
    "sparse": "sparse layouts other than COO are not supported; use torch.sparse_coo_tensor or a "
              "dense tensor",
    "distributed": "torch.distributed (several processes or devices) does not exist in a web page",
    "cuda_stream": "CUDA streams, events and graphs have no WebGPU counterpart here; torchweb "
                   "orders work on one queue (torch.webgpu.synchronize() waits for it)",
    "nested": "nested (jagged) tensors are not supported",
    "scaled_mm": "scaled float8/float4 matmuls need 8-bit and 4-bit float types, which WebGPU does "
                 "not have; use F.grouped_mm or matmul in float32/float16",
    "datapipes": "DataPipes were deprecated and removed from PyTorch's supported API; use "
                 "Dataset / IterableDataset with DataLoader",
    "profiler": "PyTorch's profiler is not part of torchweb; use bench/ or the browser's "
                "performance tools",
    "saved_tensor": "torchweb keeps a node's saved tensors as plain tensors on its ctx (no "
                    "SavedTensor objects); read them with ctx.saved_tensors",
    "multi_grad_hook": "not implemented by torchweb; register a hook on each tensor "
                       "(Tensor.register_hook) instead",
    "saved_mutation": "not implemented by torchweb: an in-place change to a saved tensor raises at "
                      "backward; clone the tensor before changing it",
    "partitioner": "activation memory budgets belong to torch.compile's partitioner, which torchweb "
                   "does not have",
    "legacy": "a legacy PyTorch API kept only for backward compatibility, not carried by torchweb",
    "dlpack": "DLPack exchange needs shared host memory; use tensor.tolist(), numpy() or "
              "torch.webgpu.to_memoryview()",
    "rnn_internal": "the fused RNN kernels behind nn.RNN/LSTM/GRU; use those modules (or "
                    "nn.LSTMCell etc.) instead",
    "internal": "an internal of PyTorch's C++ core (dispatcher, __torch_function__ machinery, "
                "monitoring, library loading), not part of the API torchweb follows",
    "other_backend": "a switch of another PyTorch backend (IPU, XLA); torchweb's device is webgpu",
    "lua_lrn": "PyTorch's legacy Lua-torch LRN (an asymmetric channel window and a hand-written "
               "backward); use nn.LocalResponseNorm",
    "export": "exporting a model for another runtime (ONNX, torch.export) is not part of torchweb; "
              "save weights with torch.save(model.state_dict(), path) or safetensors",
    "sparse_op": "this sparse operation is not implemented: torchweb's sparse COO tensors support "
                 "construction, conversion, coalesce, products with dense tensors (torch.sparse.mm, torch.spmm), "
                 "sum and softmax (docs/sparse.md); use to_dense()",
    "first_class_dims": "first-class dimensions (functorch.dim) are not supported; index with "
                        "ordinary dims",
}

# namespace -> [(pattern over names, reason key)]: checked after NAMES (not for Tensor, whose
# refusals are installed as descriptors, one per name listed)
PATTERNS = {
    "torch": [
        (r"^(q_|quantize|quantized_|dequantize|fake_quantize|qint|quint|qscheme|per_tensor_|"
         r"per_channel_|choose_qparams|fused_moving_avg_obs|int_repr|Q(U)?Int\w*Storage)", "quantization"),
        (r"^(cudnn_|miopen_|mkldnn_|fbgemm_|native_|batch_norm_(backward|elemt|gather|stats|update)|"
         r"_?cufft|conv_tbc$)", "vendor"),
        (r"^sym_|^Sym", "symbolic"),
        (r"Storage$|^StorageBase$", "storage"),
        (r"^(float8_|float4_|int[1-7]$|uint(1|2|3|4|5|6|7|16|32|64)$|bits\w+$|complex32$|chalf$)", "dtype"),
        (r"^sparse_(csr|csc|bsr|bsc|compressed)", "sparse"),
        (r"^(sspaddmm|hspmm|dsmm|hsmm|smm|saddmm|resize_as_sparse_)$", "sparse_op"),
        (r"^(rnn_(relu|tanh)|lstm|gru)(_cell)?$", "rnn_internal"),
    ],
}

# namespace -> {name: reason key}: the names no pattern covers
def _names(text, key):
    return dict.fromkeys(text.split(), key)


NAMES = {
    "torch": {
        **_names("""AliasDb AnyType Argument ArgumentSpec AwaitType Block BoolType BufferDict CallStack
            Capsule ClassType Code CompilationUnit CompleteArgumentSpec ComplexType ConcreteModuleType
            ConcreteModuleTypeBuilder DeepCopyMemoTable DeviceObjType DictType EnumType ErrorReport
            ExecutionPlan FileCheck FloatType FunctionSchema Future FutureType Gradient Graph
            GraphExecutorState InferredType IntType InterfaceType JITException ListType
            LiteScriptModule ModuleDict Node NoneType NumberType OptionalType ParameterDict
            PyObjectType RRefType ScriptClass ScriptClassFunction ScriptDict ScriptDictIterator
            ScriptDictKeyIterator ScriptFunction ScriptList ScriptListIterator ScriptMethod
            ScriptModule ScriptModuleSerializer ScriptObject ScriptObjectProperty StaticModule
            StreamObjType StringType TensorType TracingState TupleType Type UnionType Use Value
            fork wait import_ir_module import_ir_module_from_buffer merge_type_from_type_comment
            parse_ir parse_schema parse_type_comment unify_type_list""", "jit"),
        **_names("""AVG SUM AggregationType BenchmarkConfig BenchmarkExecutionStats ThroughputBenchmark
            DisableTorchFunction DisableTorchFunctionSubclass DispatchKey DispatchKeySet
            ExcludeDispatchKeyGuard FatalError IODescriptor LockingLogger LoggerBase NoopLogger
            OperatorInfo PRIVATE_OPS Tag USE_GLOBAL_DEPS USE_RTLD_GLOBAL_WITH_LIBTORCH classproperty
            thread_safe_generator slice_inverse segment_reduce hash_tensor
            DeserializationStorageContext SerializationStorageContext PyTorchFileReader
            PyTorchFileWriter""", "internal"),
        **_names("Event Stream profiler_allow_cudagraph_cupti_lazy_reinit_cuda12", "cuda_stream"),
        **_names("prepare_multiprocessing_environment", "distributed"),
        **_names("""get_autocast_ipu_dtype get_autocast_xla_dtype is_autocast_ipu_enabled
            is_autocast_xla_enabled set_autocast_ipu_dtype set_autocast_ipu_enabled
            set_autocast_xla_dtype set_autocast_xla_enabled""", "other_backend"),
        **_names("empty_quantized", "quantization"),
        **_names("bit", "dtype"),
        **_names("lobpcg", "linalg"),
        **_names("eig lstsq matrix_rank solve symeig", "linalg_removed"),
        **_names("jagged", "nested"),
        **_names("onnx export", "export"),
        **_names("from_dlpack to_dlpack", "dlpack"),
        **_names("get_file_path", "internal"),
        **_names("ccol_indices_copy col_indices_copy crow_indices_copy "
                 "row_indices_copy indices_copy values_copy", "sparse"),
    },
    "Tensor": {
        **_names("""dequantize int_repr q_per_channel_axis q_per_channel_scales q_per_channel_zero_points
            q_scale q_zero_point qscheme""", "quantization"),
        **_names("hash_tensor slice_inverse", "internal"),
        **_names("reinforce", "legacy"),
        **dict.fromkeys(("ccol_indices", "col_indices", "crow_indices", "row_indices", "to_sparse_csr",
                         "to_sparse_csc", "to_sparse_bsr", "to_sparse_bsc"), "sparse"),
        **dict.fromkeys(("smm", "sspaddmm", "sparse_resize_", "sparse_resize_and_clear_",
                         "resize_as_sparse_"), "sparse_op"),
        "index": "first_class_dims", "to_mkldnn": "vendor", "to_padded_tensor": "nested",
        **dict.fromkeys(("eig", "lstsq", "solve", "symeig"), "linalg_removed"),
    },
    "nn": {"CrossMapLRN2d": "lua_lrn"},
    "nn.functional": dict.fromkeys(("scaled_mm", "scaled_grouped_mm", "ScalingType", "SwizzleType"), "scaled_mm"),
    "nn.init": {},
    "nn.utils": {},
    "optim.lr_scheduler": {},
    "autograd": {
        **_names("""ProfilerActivity ProfilerConfig ProfilerEvent ProfilerState DeviceType profiler
            profiler_legacy profiler_util""", "profiler"),
        "SavedTensor": "saved_tensor", "NestedIOFunction": "legacy",
    },
    "autograd.graph": {
        "register_multi_grad_hook": "multi_grad_hook", "allow_mutation_on_saved_tensors": "saved_mutation",
        "region_activation_memory_budget": "partitioner",
        **_names("set_override_stale_capture_stream set_warn_on_accumulate_grad_stream_mismatch",
                 "cuda_stream"),
    },
    "utils.data": _names("""DFIterDataPipe DataChunk IterDataPipe MapDataPipe argument_validation
        functional_datapipe guaranteed_datapipes_determinism non_deterministic runtime_validation
        runtime_validation_disabled""", "datapipes"),
    "special": {},
    "func": {},
}

_COMPILED = {ns: [(re.compile(p), key) for p, key in pats] for ns, pats in PATTERNS.items()}


def reason(namespace, name):
    """The reason torchweb refuses namespace.name, or None if it does not refuse it."""
    key = NAMES.get(namespace, {}).get(name)
    if key is None:
        for pattern, k in _COMPILED.get(namespace, ()):
            if pattern.search(name):
                key = k
                break
    return None if key is None else REASONS[key]


def _qualified(namespace, name):
    return f"torch.{name}" if namespace == "torch" else f"torch.{namespace}.{name}"


def message(namespace, name):
    why = reason(namespace, name)
    return None if why is None else f"{_qualified(namespace, name)} is not supported by torchweb: {why}"


def module_getattr(namespace, module_name):
    """A module's __getattr__: refused names raise their reason, others the usual error."""
    def __getattr__(name):
        msg = message(namespace, name) if not name.startswith("__") else None
        raise AttributeError(msg or f"module '{module_name}' has no attribute '{name}'")
    return __getattr__


def refuse_the_rest(qualified, why):
    """A __getattr__ for a module whose every other public name torchweb refuses for one
    reason (torch.jit's compiler, torch.fx's tracing, ...): `{qualified}.{name} is not
    supported by torchweb: {why}`."""
    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(f"{qualified}.{name} is not supported by torchweb: {why}")
    return __getattr__


class _RefusedAttribute:
    """A Tensor attribute torchweb refuses: reading it (on the class or a tensor) raises
    AttributeError with the reason, so hasattr() is False."""

    def __init__(self, name):
        self.name = name

    def __get__(self, obj, owner=None):
        raise AttributeError(message("Tensor", self.name))


def install_tensor_refusals(tensor_cls):
    """A refusing descriptor on Tensor for each refused name it lacks."""
    for name in NAMES["Tensor"]:
        if name not in tensor_cls.__dict__ and not any(name in k.__dict__ for k in tensor_cls.__mro__):
            setattr(tensor_cls, name, _RefusedAttribute(name))
