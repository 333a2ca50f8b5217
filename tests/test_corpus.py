"""The corpus of real programs: public PyTorch programs and model files (tests/corpus/, license
headers kept, only their data replaced) run against torchweb and against PyTorch on the same
weights and batches (docs/testing.md, "The corpus of real programs", lists them).

A PROGRAMS entry builds the program's model with both libraries (the file executed once with
`torch` bound to each; initialization drawn from one shared stream, then torchweb's state_dict
copied into PyTorch's model), and either compares forward output, loss, parameter gradients and
a few optimizer steps (`batch`, `loss`, `optim`), or runs the program's own training code
(`train`, drivers in corpus_drivers.py) and compares what it returns and the weights it leaves.
A SCRIPTS entry runs a whole script as __main__ with an argv. Dropout layers are off in PROGRAMS;
the masks of F.dropout calls (examples/gat's) are shared in `train` entries and in SCRIPTS.
Random draws (torch.randn, multinomial, ...) come from one stream shared by both runs
(corpus_harness.SharedNoise): the two libraries' generators differ."""

import os
from dataclasses import dataclass, field
from typing import Callable, Optional

import pytest
import torch

import torchweb as tw
from corpus_harness import (SharedNoise, assert_same, assert_same_grads, assert_same_state,
                            copy_weights, cuda_names_webgpu, load, no_dropout, run_script, to_ours)
from corpus_drivers import (ForwardForwardNet, char_rnn_train, cls_loss, ddp_series_trainer,
                            ddpg_train, default_loss, dqn_train, forward_forward_train, gpt_config,
                            graph, graph_step, graph_train, llama2c_args, llama_args, mamba_config,
                            mingpt_trainer, networks, policy_train, ppo_train, randint, randn,
                            run_forward, time_sequence_train, whisper_dims, whisper_front_end,
                            whisper_loss)


@dataclass
class Program:
    id: str
    file: str
    build: Callable                      # (module, lib) -> model
    batch: Optional[Callable] = None     # (step) -> tuple of torch tensors: the model's inputs
    loss: Optional[Callable] = None      # (module, lib, output, *batch) -> scalar
    forward: Optional[Callable] = None   # (model, *batch) -> output; default model(*batch)
    optim: Callable = field(default=lambda lib, params: lib.optim.SGD(params, lr=0.01, momentum=0.9))
    steps: int = 3
    train: Optional[Callable] = None     # (module, lib, model, device) -> values to compare
    tol: tuple = (2e-4, 2e-5)            # rtol, atol
    xfail: Optional[str] = None
    eval: bool = False                   # compare in eval mode (BatchNorm running statistics)
    preset: dict = field(default_factory=dict)   # globals the program's left-out setup would set
    devices: tuple = ("cpu", "webgpu")   # the heaviest run on one device only, to keep the file fast
    cuda: bool = False                   # "cuda" names webgpu in the webgpu run (as the torch alias has it)


PROGRAMS = [
    Program("examples/super_resolution", "examples_super_resolution.py", lambda m, lib: m.Net(2),
            batch=lambda s: (randn(2, 1, 8, 8, step=s),),
            loss=lambda m, lib, out, x: lib.nn.MSELoss()(out, lib.ones_like(out) * 0.5),
            optim=lambda lib, params: lib.optim.Adam(params, lr=1e-3)),
    Program("examples/time_sequence_prediction", "examples_time_sequence_prediction.py", lambda m, lib: m.Sequence(),
            train=time_sequence_train,
            xfail="needs float64 layers (Module.double(), float64 LSTMCell and Linear: torchweb's float64 is "
                  "host-only, issue 18 item 6); its optim.LBFGS loop runs in float32 in test_optim_lbfgs.py"),
    Program("examples/fast_neural_style", "examples_fast_neural_style.py", lambda m, lib: m.TransformerNet(),
            batch=lambda s: (randn(1, 3, 16, 16, step=s),)),
    Program("examples/language_translation", "examples_language_translation.py",
            lambda m, lib: m.Translator(1, 1, 8, 2, 11, 13, 16, 0.0),
            batch=lambda s: (randint(11, 5, 2, step=s), randint(13, 4, 2, step=s)),
            forward=lambda model, src, tgt: model(src, tgt, None, None, None, None, None),
            loss=lambda m, lib, out, src, tgt: lib.nn.CrossEntropyLoss()(out.reshape(-1, 13), tgt.reshape(-1))),
    Program("examples/gcn", "examples_gcn.py", lambda m, lib: m.GCN(5, 8, 3), train=graph_train),
    Program("examples/gat", "examples_gat.py", lambda m, lib: m.GAT(5, 8, 2, 3, concat=True), train=graph_train),
    # (CPU programs: their states come from torch.from_numpy, on the CPU whatever the default device)
    Program("examples/reinforce", "examples_reinforce.py", lambda m, lib: m.Policy(), train=policy_train,
            devices=("cpu",)),
    Program("examples/actor_critic", "examples_actor_critic.py", lambda m, lib: m.Policy(), train=policy_train,
            devices=("cpu",)),
    Program("examples/mnist_forward_forward", "examples_forward_forward.py", ForwardForwardNet(),
            train=lambda m, lib, model, d: forward_forward_train(m, lib, model.net, d)),
    Program("examples/llama2 (tensor_parallelism)", "examples_llama2.py",
            lambda m, lib: m.Transformer.from_model_args(llama_args(m)),
            batch=lambda s: (randint(23, 2, 6, step=s),),
            loss=lambda m, lib, out, tok: lib.nn.functional.cross_entropy(out.flatten(0, 1), tok.roll(-1, 1).flatten()),
            optim=lambda lib, params: lib.optim.AdamW(params, lr=1e-3)),
    Program("examples/siamese_network", "examples_siamese_network.py", lambda m, lib: m.SiameseNetwork(),
            batch=lambda s: (randn(2, 1, 16, 16, step=s), randn(2, 1, 16, 16, step=s + 50)),
            loss=lambda m, lib, out, a, b: lib.nn.BCELoss()(out.squeeze(), lib.tensor([1.0, 0.0], device=out.device)),
            optim=lambda lib, params: lib.optim.Adadelta(params, lr=1.0), steps=2, eval=True),
    Program("minGPT/model", "mingpt_model.py", lambda m, lib: m.GPT(gpt_config(m)),
            batch=lambda s: (randint(17, 2, 8, step=s), randint(17, 2, 8, step=s + 50)),
            loss=lambda m, lib, out, idx, tgt: out[1],
            optim=lambda lib, params: lib.optim.AdamW(params, lr=1e-3, betas=(0.9, 0.95))),
    Program("minGPT/trainer (Trainer, callbacks)", "mingpt_model.py", lambda m, lib: m.GPT(gpt_config(m)),
            train=mingpt_trainer, tol=(1e-3, 1e-4)),
    Program("llama2.c/model", "llama2c_model.py", lambda m, lib: m.Transformer(llama2c_args(m)),
            batch=lambda s: (randint(31, 2, 8, step=s), randint(31, 2, 8, step=s + 50)),
            forward=lambda model, tok, tgt: (model(tok, tgt), model.last_loss),
            loss=lambda m, lib, out, tok, tgt: out[1],
            optim=lambda lib, params: lib.optim.AdamW(params, lr=1e-3)),
    Program("whisper/model", "whisper_model.py", lambda m, lib: m.Whisper(whisper_dims(m)),
            batch=lambda s: (randn(2, 8, 12, step=s), randint(29, 2, 5, step=s)), loss=whisper_loss,
            optim=lambda lib, params: lib.optim.AdamW(params, lr=1e-3)),
    Program("whisper/audio (log-mel front end)", "whisper_audio.py", lambda m, lib: lib.nn.Module(),
            train=whisper_front_end),
    Program("mamba.py/mamba (parallel scan)", "mambapy_mamba.py", lambda m, lib: m.Mamba(mamba_config(m)),
            batch=lambda s: (randn(2, 8, 8, step=s),), optim=lambda lib, params: lib.optim.AdamW(params, lr=1e-3)),
    Program("mamba.py/mamba (sequential scan)", "mambapy_mamba.py",
            lambda m, lib: m.Mamba(mamba_config(m, pscan=False)),
            batch=lambda s: (randn(2, 5, 8, step=s),), devices=("webgpu",)),
    Program("pyGAT/GAT", "pygat_models.py", lambda m, lib: m.GAT(5, 4, 3, dropout=0.0, alpha=0.2, nheads=2),
            batch=lambda s: graph()[:3], loss=graph_step, forward=lambda model, x, adj, y: model(x, adj),
            optim=lambda lib, params: lib.optim.Adam(params, lr=5e-3, weight_decay=5e-4)),
    Program("pyGAT/SpGAT (sparse, custom autograd.Function)", "pygat_models.py",
            lambda m, lib: m.SpGAT(5, 4, 3, dropout=0.0, alpha=0.2, nheads=2),
            batch=lambda s: graph()[:3], loss=graph_step, forward=lambda model, x, adj, y: model(x, adj),
            optim=lambda lib, params: lib.optim.Adam(params, lr=5e-3, weight_decay=5e-4), cuda=True),
    Program("pygcn/GCN", "pygcn_models.py", lambda m, lib: m.GCN(5, 8, 3, dropout=0.0),
            batch=lambda s: graph()[:3], loss=graph_step, forward=lambda model, x, adj, y: model(x, adj),
            optim=lambda lib, params: lib.optim.Adam(params, lr=0.01, weight_decay=5e-4)),
    Program("improved-diffusion/UNetModel", "improved_diffusion_unet.py",
            lambda m, lib: m.UNetModel(3, 32, 3, num_res_blocks=1, attention_resolutions=(2,), channel_mult=(1, 2),
                                       num_heads=2, use_scale_shift_norm=True),
            batch=lambda s: (randn(2, 3, 8, 8, step=s), randint(1000, 2, step=s)),
            loss=lambda m, lib, out, x, t: (out - x).pow(2).mean(),
            optim=lambda lib, params: lib.optim.AdamW(params, lr=1e-4), steps=2, devices=("webgpu",)),
    Program("char-rnn.pytorch (GRU, generate)", "char_rnn_generate.py",
            lambda m, lib: m.CharRNN(m.n_characters, 16, m.n_characters, model="gru", n_layers=2),
            train=char_rnn_train, tol=(1e-3, 1e-4)),
    Program("char-rnn.pytorch (LSTM, generate)", "char_rnn_generate.py",
            lambda m, lib: m.CharRNN(m.n_characters, 16, m.n_characters, model="lstm", n_layers=1),
            train=char_rnn_train, tol=(1e-3, 1e-4), devices=("webgpu",)),
    Program("minimalRL/dqn", "minimalrl_dqn.py", networks(q=lambda m: m.Qnet(), q_target=lambda m: m.Qnet()),
            train=dqn_train),
    Program("minimalRL/ddpg", "minimalrl_ddpg.py",
            networks(mu=lambda m: m.MuNet(), mu_target=lambda m: m.MuNet(), q=lambda m: m.QNet(),
                  q_target=lambda m: m.QNet()), train=ddpg_train),
    Program("minimalRL/ppo", "minimalrl_ppo.py", lambda m, lib: m.PPO(), train=ppo_train),
    Program("examples/ddp-tutorial-series single_gpu (Trainer)", "examples_ddp_series_single_gpu.py",
            lambda m, lib: m.torch.nn.Linear(20, 4), train=ddp_series_trainer),
    Program("torchvision/resnet18", "torchvision_models_resnet.py",
            lambda m, lib: m.resnet18(num_classes=5), batch=lambda s: (randn(2, 3, 64, 64, step=s),),
            loss=lambda m, lib, out, x: lib.nn.functional.cross_entropy(out, lib.tensor([1, 3], device=out.device)),
            steps=2, tol=(1e-3, 1e-4), devices=("webgpu",)),
    Program("torchvision/resnet (Bottleneck, groups)", "torchvision_models_resnet.py",
            lambda m, lib: m.ResNet(m.Bottleneck, [1, 1, 1, 1], num_classes=4, groups=2, width_per_group=8,
                                    zero_init_residual=True),
            loss=cls_loss, batch=lambda s: (randn(2, 3, 32, 32, step=s),), eval=True, steps=2, devices=("webgpu",)),
    Program("torchvision/mobilenet_v2", "torchvision_models_mobilenetv2.py",
            lambda m, lib: m.mobilenet_v2(num_classes=5, width_mult=0.25), loss=cls_loss,
            batch=lambda s: (randn(2, 3, 32, 32, step=s),),
            eval=True, steps=2),
    Program("torchvision/mobilenet_v3_small", "torchvision_models_mobilenetv3.py",
            lambda m, lib: m.mobilenet_v3_small(num_classes=5, width_mult=0.25), loss=cls_loss,
            batch=lambda s: (randn(2, 3, 32, 32, step=s),),
            eval=True, steps=2, devices=("webgpu",)),
    Program("torchvision/squeezenet1_1", "torchvision_models_squeezenet.py",
            lambda m, lib: m.squeezenet1_1(num_classes=5), loss=cls_loss,
            batch=lambda s: (randn(1, 3, 48, 48, step=s),), steps=2,
            devices=("webgpu",)),
    Program("torchvision/shufflenet_v2_x0_5", "torchvision_models_shufflenetv2.py",
            lambda m, lib: m.shufflenet_v2_x0_5(num_classes=5), loss=cls_loss,
            batch=lambda s: (randn(2, 3, 32, 32, step=s),),
            eval=True, steps=2, devices=("webgpu",)),
    Program("torchvision/densenet", "torchvision_models_densenet.py",
            lambda m, lib: m.DenseNet(growth_rate=4, block_config=(2, 2), num_init_features=8, bn_size=2,
                                       num_classes=5),
            loss=cls_loss, batch=lambda s: (randn(2, 3, 32, 32, step=s),), eval=True, steps=2),
    Program("torchvision/efficientnet_b0", "torchvision_models_efficientnet.py",
            lambda m, lib: m.efficientnet_b0(num_classes=5), loss=cls_loss,
            batch=lambda s: (randn(1, 3, 32, 32, step=s),),
            eval=True, steps=2, devices=("webgpu",)),
    Program("torchvision/convnext", "torchvision_models_convnext.py",
            lambda m, lib: m.ConvNeXt([m.CNBlockConfig(8, 16, 1), m.CNBlockConfig(16, None, 1)], num_classes=5),
            loss=cls_loss, batch=lambda s: (randn(2, 3, 32, 32, step=s),), steps=2),
    Program("torchvision/vision_transformer", "torchvision_models_vision_transformer.py",
            lambda m, lib: m.VisionTransformer(image_size=16, patch_size=8, num_layers=2, num_heads=2, hidden_dim=8,
                                               mlp_dim=16, num_classes=5),
            loss=cls_loss, batch=lambda s: (randn(2, 3, 16, 16, step=s),),
            optim=lambda lib, params: lib.optim.AdamW(params, lr=1e-3)),
    Program("torchvision/regnet", "torchvision_models_regnet.py",
            lambda m, lib: m.RegNet(m.BlockParams.from_init_params(depth=2, w_0=8, w_a=8.0, w_m=2.0, group_width=4,
                                                                    se_ratio=0.25), num_classes=5),
            loss=cls_loss, batch=lambda s: (randn(2, 3, 32, 32, step=s),), eval=True, steps=2),
    Program("torchvision/googlenet", "torchvision_models_googlenet.py",
            lambda m, lib: m.GoogLeNet(num_classes=5, aux_logits=False, init_weights=True),
            loss=cls_loss, batch=lambda s: (randn(1, 3, 32, 32, step=s),), eval=True, steps=2, devices=("webgpu",)),
]


def _params():
    for p in PROGRAMS:
        marks = [pytest.mark.xfail(strict=True, reason=p.xfail)] if p.xfail else []
        for device in p.devices:
            yield pytest.param(p, device, id=f"{device}-{p.id}", marks=marks)


@pytest.fixture
def default_device(device):
    """torchweb's default device is the test's: programs create tensors without naming one.
    PyTorch on one thread: its thread pool fights lavapipe's for the CI machine's cores."""
    if device == "webgpu" and not tw.webgpu.is_available():
        pytest.fail("no WebGPU adapter: install mesa-vulkan-drivers (lavapipe) and wgpu")
    saved, threads = tw.get_default_device(), torch.get_num_threads()
    tw.set_default_device(device)
    torch.set_num_threads(1)
    yield device
    tw.set_default_device(saved)
    torch.set_num_threads(threads)


@pytest.mark.parametrize("program,device", list(_params()))
def test_program_matches_pytorch(program, device, default_device):
    p = program
    mod_ours, mod_theirs = load(p.file, tw, preset=p.preset), load(p.file, torch, preset=p.preset)
    tw.manual_seed(0)
    torch.manual_seed(0)
    # built with initialization from one shared stream (numpy's: fast), then copied exactly
    with SharedNoise(0, init=True).active(tw):
        ours = no_dropout(p.build(mod_ours, tw))
    with SharedNoise(0, init=True).active(torch):
        theirs = no_dropout(p.build(mod_theirs, torch))
    copy_weights(ours, theirs)
    ours.to(device)
    rtol, atol = p.tol
    if p.eval:
        ours.eval()
        theirs.eval()
    if p.train:
        noise = SharedNoise(0, init=True)     # dropout a program calls as F.dropout(x, p) is shared
        with noise.active(tw), cuda_names_webgpu(p.cuda):
            got = p.train(mod_ours, tw, ours, device)
        with noise.active(torch):
            want = p.train(mod_theirs, torch, theirs, "cpu")
        assert_same(got, want, rtol, atol, "result")
        assert_same_state(ours, theirs, rtol, atol)
        return
    loss_fn = p.loss or default_loss
    opt_ours, opt_theirs = p.optim(tw, list(ours.parameters())), p.optim(torch, list(theirs.parameters()))
    for step in range(p.steps):
        batch = p.batch(step)
        noise = SharedNoise(step)
        with noise.active(tw), cuda_names_webgpu(p.cuda):
            out = run_forward(p, ours, to_ours(batch, device))
            loss = loss_fn(mod_ours, tw, out, *to_ours(batch, device))
        with noise.active(torch):
            t_out = run_forward(p, theirs, batch)
            t_loss = loss_fn(mod_theirs, torch, t_out, *batch)
        if step == 0:
            assert_same(out, t_out, rtol, atol, "output")
        assert_same(loss.item(), t_loss.item(), rtol, atol, f"loss at step {step}")
        opt_ours.zero_grad()
        opt_theirs.zero_grad()
        loss.backward()
        t_loss.backward()
        if step == 0:
            assert_same_grads(ours, theirs, rtol * 5, atol * 5)
        opt_ours.step()
        opt_theirs.step()
    assert_same_state(ours, theirs, rtol * 5, atol * 5)


# -- whole scripts -------------------------------------------------------------------------------
@dataclass
class Script:
    """A program run whole, as `python <file> <argv>`: argparse, its data loading (torchvision's
    datasets replaced by formula-made images), model construction and initialization, training
    loop, checkpoints. Every random draw comes from SharedNoise(init=True), so both libraries build
    the same weights and see the same batches; `results` picks what to compare from the script's
    globals and the files it wrote."""
    id: str
    file: str
    argv: Callable                       # (lib, device, tmpdir) -> list of arguments
    results: Callable                    # (lib, globals, tmpdir) -> values to compare
    tol: tuple = (1e-3, 1e-4)
    devices: tuple = ("cpu", "webgpu")
    xfail: Optional[str] = None


def _accel(flag_on, flag_off=None):
    """The script's accelerator switch: on for the webgpu runs (script_run points PyTorch's
    accelerator at its CPU), off for the cpu runs."""
    def argv(lib, device):
        if device == "webgpu":
            return [flag_on] if flag_on else []
        return [flag_off] if flag_off else []
    return argv


def _state(module):
    return dict(module.state_dict())


SCRIPTS = [
    Script("examples/mnist (main.py)", "examples_mnist.py",
           lambda lib, device, tmp: ["--batch-size", "4", "--test-batch-size", "4", "--epochs", "1",
                                     "--log-interval", "1", "--save-model"] + _accel(None, "--no-accel")(lib, device),
           lambda lib, g, tmp: lib.load(os.path.join(tmp, "mnist_cnn.pt"))),
    Script("examples/mnist_rnn (main.py)", "examples_mnist_rnn.py",
           lambda lib, device, tmp: ["--batch-size", "4", "--test-batch-size", "4", "--epochs", "1",
                                     "--log-interval", "1", "--save-model"] + _accel("--accel")(lib, device),
           lambda lib, g, tmp: lib.load(os.path.join(tmp, "mnist_rnn.pt"))),
    Script("examples/vae (main.py)", "examples_vae.py",
           lambda lib, device, tmp: ["--batch-size", "4", "--epochs", "1", "--log-interval", "1"]
           + _accel(None, "--no-accel")(lib, device),
           lambda lib, g, tmp: (_state(g["model"]), g["sample"])),
    Script("examples/dcgan (main.py)", "examples_dcgan.py",
           lambda lib, device, tmp: ["--dataset", "fake", "--workers", "0", "--batchSize", "4", "--nz", "8",
                                     "--ngf", "4", "--ndf", "4", "--dry-run", "--outf", tmp, "--manualSeed", "1"]
           + _accel("--accel")(lib, device),
           lambda lib, g, tmp: (_state(g["netG"]), _state(g["netD"]), g["errD"].item(), g["errG"].item(),
                                g["D_x"], g["D_G_z1"], g["D_G_z2"],
                                lib.load(os.path.join(tmp, "netG_epoch_0.pth")))),
    # lr 0.1 on features up to x**4 bounces chaotically on its way down (the same first steps,
    # then float32 rounding decides the path): compare where each run stops, the learned polynomial
    Script("examples/regression (main.py)", "examples_regression.py", lambda lib, device, tmp: [],
           lambda lib, g, tmp: (_state(g["fc"]), g["loss"] < 1e-3), tol=(0.0, 0.15), devices=("cpu",)),
]


def _script_params():
    for s in SCRIPTS:
        marks = [pytest.mark.xfail(strict=True, reason=s.xfail)] if s.xfail else []
        for device in s.devices:
            yield pytest.param(s, device, id=f"{device}-{s.id}", marks=marks)


@pytest.mark.parametrize("script,device", list(_script_params()))
def test_script_matches_pytorch(script, device, default_device, tmp_path):
    results = {}
    for lib in (tw, torch):
        tmp = str(tmp_path / lib.__name__)
        os.makedirs(tmp)
        argv = [script.file] + script.argv(lib, device, tmp)
        g = run_script(script.file, lib, device, argv, tmp).__dict__
        results[lib] = script.results(lib, g, tmp)
    rtol, atol = script.tol
    assert_same(results[tw], results[torch], rtol, atol, "result")
