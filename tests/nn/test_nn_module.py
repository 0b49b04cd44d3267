"""opweave.nn.Module and Parameter: registration, iteration, modes, conversion, state dicts, hooks, repr."""

from __future__ import annotations

import copy
import pickle
from collections import OrderedDict

import numpy as np
import opweave
import pytest
from opweave import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(4, 2, bias=False)
        self.register_buffer("steps", opweave.zeros(1))
        self.register_buffer("scratch", opweave.ones(2), persistent=False)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def test_parameter_is_a_leaf_tensor_that_requires_grad_and_shares_memory():
    data = opweave.ones(2, 3)
    p = nn.Parameter(data)
    assert isinstance(p, nn.Parameter) and isinstance(p, opweave.Tensor)
    assert p.requires_grad and p.is_leaf and p.grad is None
    assert not data.requires_grad
    assert p.data_ptr() == data.data_ptr()
    with opweave.no_grad():
        p.add_(1)
    np.testing.assert_array_equal(data.numpy(), np.full((2, 3), 2.0))
    assert not nn.Parameter(opweave.ones(2), requires_grad=False).requires_grad
    assert repr(nn.Parameter(opweave.ones(2))).startswith("Parameter containing:\ntensor([1., 1.]")
    assert nn.Parameter().shape == (0,)
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(opweave.ones(2, dtype=opweave.int64))
    with pytest.raises(TypeError):
        nn.Parameter([1.0, 2.0])


def test_parameter_deepcopy_and_pickle_keep_type_values_and_flag():
    p = nn.Parameter(opweave.tensor([1.0, 2.0]), requires_grad=False)
    q = copy.deepcopy(p)
    assert isinstance(q, nn.Parameter) and not q.requires_grad and q.data_ptr() != p.data_ptr()
    np.testing.assert_array_equal(q.detach().numpy(), [1.0, 2.0])
    r = pickle.loads(pickle.dumps(nn.Parameter(opweave.tensor([3.0]))))
    assert isinstance(r, nn.Parameter) and r.requires_grad
    np.testing.assert_array_equal(r.detach().numpy(), [3.0])


def test_registration_by_assignment_and_iteration_order():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == ["fc1.weight", "fc1.bias", "fc2.weight"]
    assert [n for n, _ in net.named_buffers()] == ["steps", "scratch"]
    assert [n for n, _ in net.named_children()] == ["fc1", "act", "fc2"]
    assert [n for n, _ in net.named_modules()] == ["", "fc1", "act", "fc2"]
    assert [n for n, _ in net.named_parameters(prefix="model")][0] == "model.fc1.weight"
    assert list(net.named_parameters(recurse=False)) == []
    assert len(list(net.parameters())) == 3 and len(list(net.buffers())) == 2
    assert list(net.modules())[0] is net
    assert net.get_submodule("fc1") is net.fc1
    assert net.get_parameter("fc2.weight") is net.fc2.weight
    assert net.get_buffer("steps") is net.steps
    with pytest.raises(AttributeError, match="has no attribute `nope`"):
        net.get_submodule("nope")
    with pytest.raises(AttributeError, match="is not an nn.Parameter"):
        net.get_parameter("steps")


def test_shared_parameters_and_modules_are_listed_once_unless_asked():
    m = nn.Module()
    shared = nn.Linear(2, 2)
    m.a = shared
    m.b = shared
    assert len(list(m.parameters())) == 2
    assert [n for n, _ in m.named_modules()] == ["", "a"]
    assert [n for n, _ in m.named_modules(remove_duplicate=False)] == ["", "a", "b"]
    assert len(list(m.named_parameters(remove_duplicate=False))) == 4
    assert len(list(m.children())) == 1


def test_register_errors_and_reassignment_rules():
    m = nn.Module()
    with pytest.raises(KeyError, match="contain"):
        m.register_parameter("a.b", None)
    with pytest.raises(KeyError, match="empty string"):
        m.register_buffer("", None)
    with pytest.raises(TypeError, match="should be a string"):
        m.register_parameter(1, None)
    with pytest.raises(TypeError, match="cannot assign 'list' object to buffer"):
        m.register_buffer("b", [1])
    m.w = nn.Parameter(opweave.ones(1))
    with pytest.raises(TypeError, match="cannot assign 'Tensor' as parameter 'w'"):
        m.w = opweave.ones(1)
    m.w = None
    assert "w" in m._parameters and m.w is None
    m.x = 3
    with pytest.raises(KeyError, match="attribute 'x' already exists"):
        m.register_buffer("x", None)
    with pytest.raises(TypeError, match="is not a Module subclass"):
        m.add_module("c", 3)
    m.register_module("sub", nn.Identity())
    assert isinstance(m.sub, nn.Identity)
    del m.sub
    assert "sub" not in m._modules
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'missing'"):
        m.missing  # noqa: B018

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(opweave.ones(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()


def test_buffer_marker_registers_a_plain_tensor():
    m = nn.Module()
    m.b = nn.Buffer(opweave.ones(2), persistent=False)
    assert type(m.b) is opweave.Tensor and "b" in m._buffers
    assert "b" not in m.state_dict()


def test_train_eval_apply_and_requires_grad():
    net = Net()
    assert net.training and net.fc1.training
    assert net.eval() is net
    assert not net.training and not net.fc1.training and not net.act.training
    net.train()
    assert net.fc2.training
    with pytest.raises(ValueError, match="boolean"):
        net.train(1)
    seen = []
    net.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ["Linear", "ReLU", "Linear", "Net"]
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_zero_grad_sets_none_or_zeros():
    net = Net()
    for p in net.parameters():
        p.grad = opweave.ones(p.shape)
    net.zero_grad(set_to_none=False)
    for p in net.parameters():
        np.testing.assert_array_equal(p.grad.numpy(), np.zeros(tuple(p.shape)))
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


def test_to_dtype_keeps_parameter_identity_and_casts_floats_only():
    net = Net()
    net.register_buffer("count", opweave.tensor([3], dtype=opweave.int64))
    w = net.fc1.weight
    before = w.detach().numpy().copy()
    w.grad = opweave.ones(w.shape)
    assert net.double() is net
    assert net.fc1.weight is w and w.dtype == opweave.float64 and w.requires_grad
    assert w.grad.dtype == opweave.float64
    np.testing.assert_array_equal(w.detach().numpy(), before.astype(np.float64))
    assert net.count.dtype == opweave.int64 and net.steps.dtype == opweave.float64
    net.to(opweave.float32)
    assert w.dtype == opweave.float32
    net.half()
    assert w.dtype == opweave.float16
    net.float().to("cpu").cpu()
    assert w.device.type == "cpu" and w.dtype == opweave.float32
    net.to(device="cpu", dtype=opweave.float64)
    assert w.dtype == opweave.float64
    with pytest.raises(TypeError, match="floating point or complex"):
        net.to(opweave.int32)


def test_to_meta_device_moves_parameters_and_buffers():
    net = Net().to("meta")
    assert all(p.device.type == "meta" for p in net.parameters())
    assert all(b.device.type == "meta" for b in net.buffers())


def test_state_dict_keys_values_and_detached_copies():
    net = Net()
    sd = net.state_dict()
    # PyTorch's order: a module's own parameters and buffers, then its children's
    assert list(sd) == ["steps", "fc1.weight", "fc1.bias", "fc2.weight"]
    assert isinstance(sd, OrderedDict)
    assert not isinstance(sd["fc1.weight"], nn.Parameter) and not sd["fc1.weight"].requires_grad
    assert sd["fc1.weight"].data_ptr() == net.fc1.weight.data_ptr()
    assert net.state_dict(keep_vars=True)["fc1.weight"] is net.fc1.weight
    assert list(net.state_dict(prefix="m."))[1] == "m.fc1.weight"
    dest = OrderedDict()
    assert net.state_dict(destination=dest) is dest


def test_load_state_dict_copies_values_and_reports_keys():
    a, b = Net(), Net()
    result = b.load_state_dict(a.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    for (name, pa), pb in zip(a.named_parameters(), b.parameters()):
        np.testing.assert_array_equal(pa.detach().numpy(), pb.detach().numpy(), err_msg=name)
    assert a.fc1.weight.data_ptr() != b.fc1.weight.data_ptr()

    sd = a.state_dict()
    del sd["fc2.weight"]
    sd["extra"] = opweave.ones(1)
    with pytest.raises(RuntimeError) as info:
        b.load_state_dict(sd)
    msg = str(info.value)
    assert msg.startswith("Error(s) in loading state_dict for Net:")
    assert 'Missing key(s) in state_dict: "fc2.weight".' in msg
    assert 'Unexpected key(s) in state_dict: "extra".' in msg
    result = b.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["fc2.weight"] and result.unexpected_keys == ["extra"]

    bad = a.state_dict()
    bad["fc1.bias"] = opweave.ones(5)
    with pytest.raises(RuntimeError, match="size mismatch for fc1.bias: copying a param with shape"):
        b.load_state_dict(bad, strict=False)
    with pytest.raises(TypeError, match="dict-like"):
        b.load_state_dict([1])


def test_load_state_dict_assign_takes_the_tensors():
    a, b = Net(), Net()
    sd = a.state_dict()
    b.load_state_dict(sd, assign=True)
    assert isinstance(b.fc1.weight, nn.Parameter) and b.fc1.weight.requires_grad
    assert b.fc1.weight.data_ptr() == a.fc1.weight.data_ptr()
    assert b.steps is sd["steps"]


def test_batchnorm_state_dict_includes_running_stats():
    bn = nn.BatchNorm1d(3)
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]


def test_forward_hooks_pre_hooks_and_removal():
    lin = nn.Linear(2, 2)
    calls = []

    def pre(mod, args):
        calls.append("pre")
        return (args[0] * 0,)

    def post(mod, args, out):
        calls.append("post")
        return out + 1

    h1 = lin.register_forward_pre_hook(pre)
    h2 = lin.register_forward_hook(post)
    out = lin(opweave.ones(1, 2))
    expected = lin.bias.detach().numpy() + 1
    np.testing.assert_allclose(out.detach().numpy(), expected[None], rtol=1e-6)
    assert calls == ["pre", "post"]
    h1.remove()
    h2.remove()
    h2.remove()
    calls.clear()
    lin(opweave.ones(1, 2))
    assert calls == []

    class Scale(nn.Module):
        def forward(self, x, factor=1.0):
            return x * factor

    scale = Scale()
    scale.register_forward_pre_hook(lambda m, a, k: (a, {"factor": 3.0}), with_kwargs=True)
    scale.register_forward_hook(lambda m, a, k, out: out + k["factor"], with_kwargs=True)
    np.testing.assert_array_equal(scale(opweave.ones(2), factor=2.0).numpy(), [6.0, 6.0])

    errs = []
    failing = nn.Module()
    failing.register_forward_hook(lambda m, a, o: errs.append(o), always_call=True)
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        failing(1)
    assert errs == [None]


def test_global_forward_hook():
    from opweave.nn.modules.module import register_module_forward_hook

    seen = []
    handle = register_module_forward_hook(lambda m, a, o: seen.append(type(m).__name__))
    try:
        nn.Sequential(nn.ReLU(), nn.Tanh())(opweave.ones(2))
    finally:
        handle.remove()
    assert seen == ["ReLU", "Tanh", "Sequential"]


def test_full_backward_hooks_see_and_may_replace_gradients():
    lin = nn.Linear(3, 2).double()
    seen = []
    lin.register_full_backward_pre_hook(lambda m, go: seen.append(("pre", go[0].numpy().copy())) or (go[0] * 10,))
    lin.register_full_backward_hook(
        lambda m, gi, go: seen.append(("full", gi[0].numpy().copy(), go[0].numpy().copy())) or (gi[0] + 1,)
    )
    x = opweave.ones(4, 3, dtype=opweave.float64, requires_grad=True)
    lin(x).sum().backward()
    w = lin.weight.detach().numpy()
    assert [s[0] for s in seen] == ["pre", "full"]
    np.testing.assert_array_equal(seen[0][1], np.ones((4, 2)))
    np.testing.assert_array_equal(seen[1][2], np.full((4, 2), 10.0))
    np.testing.assert_allclose(seen[1][1], np.full((4, 2), 10.0) @ w)
    np.testing.assert_allclose(x.grad.numpy(), np.full((4, 2), 10.0) @ w + 1)
    np.testing.assert_allclose(lin.weight.grad.numpy(), np.full((2, 4), 10.0) @ np.ones((4, 3)))


def test_full_backward_hook_without_input_gradients_and_removal():
    lin = nn.Linear(2, 2)
    calls = []
    handle = lin.register_full_backward_hook(lambda m, gi, go: calls.append((gi, len(go))))
    lin(opweave.ones(1, 2)).sum().backward()
    assert calls == [((None,), 1)]
    handle.remove()
    lin(opweave.ones(1, 2)).sum().backward()
    assert len(calls) == 1
    with pytest.raises(NotImplementedError, match="register_full_backward_hook"):
        lin.register_backward_hook(lambda *a: None)


def test_repr_matches_pytorch_layout():
    net = Net()
    assert repr(net) == (
        "Net(\n"
        "  (fc1): Linear(in_features=3, out_features=4, bias=True)\n"
        "  (act): ReLU()\n"
        "  (fc2): Linear(in_features=4, out_features=2, bias=False)\n"
        ")"
    )
    assert repr(nn.Conv2d(1, 2, 3, padding=1, bias=False)) == (
        "Conv2d(1, 2, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False)"
    )
    assert repr(nn.BatchNorm2d(4)) == (
        "BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)"
    )
    assert repr(nn.LSTM(3, 4, 2, batch_first=True)) == "LSTM(3, 4, num_layers=2, batch_first=True)"
    assert repr(nn.Dropout(0.2)) == "Dropout(p=0.2, inplace=False)"


def test_deepcopy_module_gives_independent_parameters():
    a = Net()
    b = copy.deepcopy(a)
    assert b.fc1.weight is not a.fc1.weight and isinstance(b.fc1.weight, nn.Parameter)
    np.testing.assert_array_equal(a.fc1.weight.detach().numpy(), b.fc1.weight.detach().numpy())
    with opweave.no_grad():
        b.fc1.weight.add_(1)
    assert not np.array_equal(a.fc1.weight.detach().numpy(), b.fc1.weight.detach().numpy())


def test_module_init_rejects_arguments():
    with pytest.raises(TypeError, match="unexpected argument"):
        nn.Module(3)
