"""PyTorch's torch.func tutorials, run with torch and with torchweb on the same weights and
data (each at a smaller size, so that the tests stay quick on lavapipe): per-sample gradients
of a CNN, model ensembling, Jacobians / Hessians / hvp, and a MAML-style meta-learning step with
grad in the inner loop. Each checks the tutorial's own assertion (the transform equals the plain
loop) and that torchweb's numbers equal PyTorch's; the per-sample gradients and the ensemble
run every op through a batching rule (no per-entry fallback)."""

import copy
import functools
import warnings

import torch

import torchweb as tw
from oracle import assert_close, ours
from test_func_transforms import compare


def data(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def twin(T, dev, make):
    """make(T) for torch, and for torchweb the same module with torch's initial weights."""
    torch.manual_seed(0)
    ref = make(torch)
    if T is torch:
        return ref
    m = make(tw).to(dev)
    m.load_state_dict({k: ours(v, dev) for k, v in ref.state_dict().items()})
    return m


def const(T, dev, t):
    return t.clone() if T is torch else ours(t, dev)


# -- per-sample gradients (tutorials/intermediate/per_sample_grads) ------------------------------

def simple_cnn(T):
    nn, F = T.nn, T.nn.functional

    class SimpleCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, 1)
            self.conv2 = nn.Conv2d(4, 8, 3, 1)
            self.fc1 = nn.Linear(72, 16)
            self.fc2 = nn.Linear(16, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = F.max_pool2d(x, 2)
            x = T.flatten(x, 1)
            x = F.relu(self.fc1(x))
            return F.log_softmax(self.fc2(x), dim=1)
    return SimpleCNN()


def per_sample_grads(T, dev):
    model = twin(T, dev, simple_cnn)
    batch = const(T, dev, data(6, 1, 10, 10))
    targets = const(T, dev, torch.randint(10, (6,), generator=torch.Generator().manual_seed(1)))

    def loss_fn(predictions, targets):
        return T.nn.functional.nll_loss(predictions, targets)

    # the tutorial's reference: one backward per sample
    def compute_grad(sample, target):
        loss = loss_fn(model(sample.unsqueeze(0)), target.unsqueeze(0))
        return T.autograd.grad(loss, list(model.parameters()))
    per_sample = [T.stack(g) for g in zip(*[compute_grad(batch[i], targets[i]) for i in range(6)])]

    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params, buffers, sample, target):
        predictions = T.func.functional_call(model, (params, buffers), (sample.unsqueeze(0),))
        return loss_fn(predictions, target.unsqueeze(0))
    ft = T.func.vmap(T.func.grad(compute_loss), in_dims=(None, None, 0, 0))(params, buffers, batch, targets)
    return per_sample, ft


def batched_throughout(fn):
    """fn() with vmap's per-entry fallback counted: it must not run."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    assert not [w for w in caught if "performance drop" in str(w.message)], [str(w.message) for w in caught]
    return out


def test_per_sample_gradients(device):
    loop, ft = batched_throughout(lambda: per_sample_grads(tw, device))
    for g, f in zip(loop, ft.values()):       # the tutorial's check
        assert_close(f, torch.tensor(g.tolist()), atol=3e-3, rtol=1e-5)
    compare(ft, per_sample_grads(torch, "cpu")[1])


# -- model ensembling (tutorials/intermediate/ensembling) ---------------------------------------

@functools.lru_cache(maxsize=None)   # one class per library: stack_module_state wants one class
def simple_mlp_class(T):
    nn, F = T.nn, T.nn.functional

    class SimpleMLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(32, 16)
            self.fc2 = nn.Linear(16, 16)
            self.fc3 = nn.Linear(16, 10)

        def forward(self, x):
            x = x.flatten(1)
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            return self.fc3(x)
    return SimpleMLP


def simple_mlp(T):
    return simple_mlp_class(T)()


def ensemble(T, dev):
    torch.manual_seed(0)
    refs = [simple_mlp(torch) for _ in range(4)]
    if T is torch:
        models = refs
    else:
        models = []
        for r in refs:
            m = simple_mlp(tw).to(dev)
            m.load_state_dict({k: ours(v, dev) for k, v in r.state_dict().items()})
            models.append(m)
    minibatches = const(T, dev, data(4, 8, 32))
    minibatch = minibatches[0]
    loop_diff = T.stack([m(b) for m, b in zip(models, minibatches)])
    loop_same = T.stack([m(minibatch) for m in models])
    params, buffers = T.func.stack_module_state(models)
    base_model = copy.deepcopy(models[0])     # (the tutorial moves it to 'meta'; torchweb has no meta device)

    def fmodel(params, buffers, x):
        return T.func.functional_call(base_model, (params, buffers), (x,))
    diff = T.func.vmap(fmodel)(params, buffers, minibatches)
    same = T.func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
    return loop_diff, loop_same, diff, same


def test_model_ensembling(device):
    loop_diff, loop_same, diff, same = batched_throughout(lambda: ensemble(tw, device))
    assert_close(diff, torch.tensor(loop_diff.tolist()), atol=1e-3, rtol=1e-5)
    assert_close(same, torch.tensor(loop_same.tolist()), atol=1e-3, rtol=1e-5)
    compare((diff, same), ensemble(torch, "cpu")[2:])


# -- Jacobians, Hessians, hvp (tutorials/intermediate/jacobians_hessians) -----------------------

def jacobians(T, dev):
    F = T.func

    def predict(weight, bias, x):
        return T.nn.functional.linear(x, weight, bias).tanh()
    D = 6
    weight, bias, x = const(T, dev, data(D, D)), const(T, dev, data(D, seed=1)), const(T, dev, data(D, seed=2))
    _, vjp_fn = F.vjp(functools.partial(predict, weight, bias), x)
    unit_vectors = T.eye(D, device=dev)
    (vmap_jac,) = F.vmap(vjp_fn)(unit_vectors)
    jac_x = F.jacrev(predict, argnums=2)(weight, bias, x)
    jac_wb = F.jacrev(predict, argnums=(0, 1))(weight, bias, x)
    jac_fwd = F.jacfwd(predict, argnums=2)(weight, bias, x)
    # batch Jacobians: vmap over jacrev, and the sum trick
    Dout, Din, n = 5, 4, 3
    w2, b2, xs = const(T, dev, data(Dout, Din, seed=3)), const(T, dev, data(Dout, seed=4)), const(T, dev, data(n, Din, seed=5))
    batch_jac = F.vmap(F.jacrev(predict, argnums=2), in_dims=(None, None, 0))(w2, b2, xs)
    summed = F.jacrev(lambda w, b, x: predict(w, b, x).sum(0), argnums=2)(w2, b2, xs).movedim(1, 0)
    # Hessians
    hess = F.hessian(predict, argnums=2)(w2, b2, xs[0])
    hess_ff = F.jacfwd(F.jacfwd(predict, argnums=2), argnums=2)(w2, b2, xs[0])
    hess_rr = F.jacrev(F.jacrev(predict, argnums=2), argnums=2)(w2, b2, xs[0])
    batch_hess = F.vmap(F.hessian(predict, argnums=2), in_dims=(None, None, 0))(w2, b2, xs)

    def hvp(f, primals, tangents):
        return F.jvp(F.grad(f), primals, tangents)[1]
    x3, t3 = const(T, dev, data(4, seed=6)), const(T, dev, data(4, seed=7))
    hv = hvp(lambda a: a.sin().sum(), (x3,), (t3,))
    return (vmap_jac, jac_x, jac_wb, jac_fwd, batch_jac, summed, hess, hess_ff, hess_rr, batch_hess, hv)


def test_jacobians_and_hessians(device):
    got = jacobians(tw, device)
    vmap_jac, jac_x, _, jac_fwd, batch_jac, summed, hess, hess_ff, hess_rr, batch_hess, hv = got
    # the tutorial's checks: each way gives the same numbers
    for a, b in ((vmap_jac, jac_x), (jac_fwd, jac_x), (summed, batch_jac), (hess_ff, hess), (hess_rr, hess),
                 (batch_hess[0], hess)):
        assert_close(a, torch.tensor(b.tolist()), atol=1e-5, rtol=1e-4)
    assert_close(hv, -data(4, seed=6).sin() * data(4, seed=7), atol=1e-5, rtol=1e-4)
    compare(got, jacobians(torch, "cpu"))


# -- MAML: grad in the inner loop, the meta-gradient through it ----------------------------------

def regressor(T):
    nn = T.nn
    return nn.Sequential(nn.Linear(1, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 1))


def maml(T, dev):
    net = twin(T, dev, regressor)
    F, mse = T.func, T.nn.functional.mse_loss
    tasks, shots = 3, 5
    amp, phase = data(tasks, 1, 1, seed=8).abs() + 0.5, data(tasks, 1, 1, seed=9)
    xs, xq = data(tasks, shots, 1, seed=10) * 3, data(tasks, shots, 1, seed=11) * 3
    x_spt, x_qry = const(T, dev, xs), const(T, dev, xq)
    y_spt, y_qry = const(T, dev, amp * (xs + phase).sin()), const(T, dev, amp * (xq + phase).sin())

    def loss(params, x, y):
        return mse(F.functional_call(net, params, (x,)), y)

    def inner_loop(params, x_spt, y_spt, x_qry, y_qry):
        for _ in range(2):
            grads = F.grad(loss)(params, x_spt, y_spt)
            params = {k: params[k] - 0.1 * grads[k] for k in params}
        return loss(params, x_qry, y_qry)

    params = dict(net.named_parameters())
    qry_losses = F.vmap(inner_loop, in_dims=(None, 0, 0, 0, 0))(params, x_spt, y_spt, x_qry, y_qry)
    qry_losses.mean().backward()
    meta_grads = [p.grad for p in net.parameters()]
    # the same meta-gradient as a transform of its own, for the first task
    detached = {k: v.detach() for k, v in params.items()}
    one_task = F.grad(inner_loop)(detached, x_spt[0], y_spt[0], x_qry[0], y_qry[0])
    return qry_losses, meta_grads, one_task


def test_maml_inner_loop_with_grad(device):
    compare(maml(tw, device), maml(torch, "cpu"))
