"""RNN, LSTM, GRU and their cells: PyTorch's parameters, layouts and equations, one time step at a time.

Equations (PyTorch's documentation), gates stacked in the weights in this order:
RNN ``h' = act(W_ih x + b_ih + W_hh h + b_hh)``; LSTM (i, f, g, o) ``c' = f c + i g``, ``h' = o tanh(c')``
(then ``h' = W_hr h'`` with ``proj_size``); GRU (r, z, n) ``n = tanh(W_in x + b_in + r (W_hn h + b_hn))``,
``h' = (1 - z) n + z h``.
"""

from __future__ import annotations

import math

import opweave

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _rnn_step(x, h, w_ih, w_hh, b_ih, b_hh, nonlinearity: str):
    pre = opweave.linear(x, w_ih, b_ih) + opweave.linear(h, w_hh, b_hh)
    return opweave.tanh(pre) if nonlinearity == "tanh" else opweave.relu(pre)


def _lstm_step(x, h, c, w_ih, w_hh, b_ih, b_hh, w_hr=None):
    gates = opweave.linear(x, w_ih, b_ih) + opweave.linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, -1)
    i, f, g, o = opweave.sigmoid(i), opweave.sigmoid(f), opweave.tanh(g), opweave.sigmoid(o)
    c_new = f * c + i * g
    h_new = o * opweave.tanh(c_new)
    if w_hr is not None:
        h_new = opweave.linear(h_new, w_hr)
    return h_new, c_new


def _gru_step(x, h, w_ih, w_hh, b_ih, b_hh):
    gi = opweave.linear(x, w_ih, b_ih)
    gh = opweave.linear(h, w_hh, b_hh)
    i_r, i_z, i_n = gi.chunk(3, -1)
    h_r, h_z, h_n = gh.chunk(3, -1)
    r = opweave.sigmoid(i_r + h_r)
    z = opweave.sigmoid(i_z + h_z)
    n = opweave.tanh(i_n + r * h_n)
    return (1 - z) * n + z * h


class RNNBase(Module):
    """The shared parameters and loop of RNN, LSTM and GRU.

    ``mode`` is ``"RNN_TANH"``, ``"RNN_RELU"``, ``"LSTM"`` or ``"GRU"``.
    """

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        if mode not in _GATES:
            raise ValueError(f"Unrecognized RNN mode: {mode}")
        if not isinstance(dropout, (int, float)) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of an element being zeroed"
            )
        if not isinstance(hidden_size, int) or isinstance(hidden_size, bool):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names: list = []
        self._all_weights: list = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                suffix = "_reverse" if direction == 1 else ""
                names = [f"weight_ih_l{layer}{suffix}", f"weight_hh_l{layer}{suffix}"]
                shapes = [(gate_size, layer_input_size), (gate_size, real_hidden_size)]
                if bias:
                    names += [f"bias_ih_l{layer}{suffix}", f"bias_hh_l{layer}{suffix}"]
                    shapes += [(gate_size,), (gate_size,)]
                if proj_size > 0:
                    names.append(f"weight_hr_l{layer}{suffix}")
                    shapes.append((proj_size, hidden_size))
                for name, shape in zip(names, shapes):
                    setattr(self, name, Parameter(opweave.empty(*shape, device=device, dtype=dtype)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight and bias from U(-1/√hidden_size, 1/√hidden_size)."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def all_weights(self) -> list:
        """The parameters per layer and direction, in PyTorch's order."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def _weights(self, layer: int, direction: int):
        suffix = "_reverse" if direction == 1 else ""
        get = lambda n: getattr(self, f"{n}_l{layer}{suffix}", None)  # noqa: E731
        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh"), get("weight_hr")

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    def _run(self, input, hx):
        """Run the stack; ``hx`` is (h0,) or (h0, c0) of shape (layers·directions, N, H). Returns (output, states)."""
        name = type(self).__name__
        if input.dim() not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D instead")
        batched = input.dim() == 3
        if not batched:
            input = input.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        if input.shape[-1] != self.input_size:
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got {input.shape[-1]}"
            )
        seq_len, batch = input.shape[0], input.shape[1]
        num_directions = 2 if self.bidirectional else 1
        out_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        sizes = [out_size] + ([self.hidden_size] if self.mode == "LSTM" else [])
        states = []
        for k, size in enumerate(sizes):
            expected = (self.num_layers * num_directions, batch, size)
            if hx is None:
                states.append(opweave.zeros(*expected, dtype=input.dtype, device=input.device))
                continue
            h = hx[k]
            if not batched:
                if h.dim() != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {h.dim()}-D tensor")
                h = h.unsqueeze(1)
            elif h.dim() != 3:
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {h.dim()}-D tensor")
            if tuple(h.shape) != expected:
                raise RuntimeError(f"Expected hidden size {expected}, got {list(h.shape)}")
            states.append(h)
        layer_input = input
        finals: list = [[] for _ in sizes]
        for layer in range(self.num_layers):
            direction_outputs = []
            for direction in range(num_directions):
                idx = layer * num_directions + direction
                w_ih, w_hh, b_ih, b_hh, w_hr = self._weights(layer, direction)
                h = states[0][idx]
                c = states[1][idx] if self.mode == "LSTM" else None
                steps = range(seq_len - 1, -1, -1) if direction == 1 else range(seq_len)
                outs = [None] * seq_len
                for t in steps:
                    x = layer_input[t]
                    if self.mode == "LSTM":
                        h, c = _lstm_step(x, h, c, w_ih, w_hh, b_ih, b_hh, w_hr)
                    elif self.mode == "GRU":
                        h = _gru_step(x, h, w_ih, w_hh, b_ih, b_hh)
                    else:
                        h = _rnn_step(x, h, w_ih, w_hh, b_ih, b_hh, "tanh" if self.mode == "RNN_TANH" else "relu")
                    outs[t] = h
                if seq_len:
                    direction_outputs.append(opweave.stack(outs, 0))
                else:
                    direction_outputs.append(opweave.zeros(0, batch, out_size, dtype=input.dtype, device=input.device))
                finals[0].append(h)
                if self.mode == "LSTM":
                    finals[1].append(c)
            layer_output = direction_outputs[0] if num_directions == 1 else opweave.cat(direction_outputs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_output = F.dropout(layer_output, self.dropout, True)
            layer_input = layer_output
        output = layer_input
        final_states = [opweave.stack(f, 0) for f in finals]
        if not batched:
            output = output.squeeze(1)
            final_states = [s.squeeze(1) for s in final_states]
        elif self.batch_first:
            output = output.transpose(0, 1)
        return output, final_states


class RNN(RNNBase):
    """Elman RNN with ``tanh`` or ``relu``: ``RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', ...)``."""

    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        nonlinearity = self.nonlinearity
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        """``(output, h_n)``."""
        output, (h_n,) = self._run(input, None if hx is None else (hx,))
        return output, h_n

    def extra_repr(self) -> str:
        s = super().extra_repr()
        return s + (f", nonlinearity={self.nonlinearity}" if self.nonlinearity != "tanh" else "")


class LSTM(RNNBase):
    """Long short-term memory: ``forward(input, (h_0, c_0)) -> (output, (h_n, c_n))``; ``proj_size`` projects ``h``."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input, hx=None):
        """``(output, (h_n, c_n))``."""
        if hx is not None and not (isinstance(hx, tuple) and len(hx) == 2):
            raise RuntimeError("LSTM: hx must be a tuple (h_0, c_0)")
        output, (h_n, c_n) = self._run(input, hx)
        return output, (h_n, c_n)


class GRU(RNNBase):
    """Gated recurrent unit: ``forward(input, h_0) -> (output, h_n)``."""

    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        """``(output, h_n)``."""
        output, (h_n,) = self._run(input, None if hx is None else (hx,))
        return output, h_n


class RNNCellBase(Module):
    """Shared parameters of the cells: ``weight_ih`` (gates·H, in), ``weight_hh`` (gates·H, H), biases."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device=None, dtype=None) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(opweave.empty(num_chunks * hidden_size, input_size, device=device, dtype=dtype))
        self.weight_hh = Parameter(opweave.empty(num_chunks * hidden_size, hidden_size, device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(opweave.empty(num_chunks * hidden_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(opweave.empty(num_chunks * hidden_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight and bias from U(-1/√hidden_size, 1/√hidden_size)."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.bias is not True:
            s += ", bias={bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def _prepare(self, input, hx, zeros: int):
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = tuple(
                opweave.zeros(input.shape[0], self.hidden_size, dtype=input.dtype, device=input.device)
                for _ in range(zeros)
            )
        else:
            hx = tuple(h if batched else h.unsqueeze(0) for h in hx)
        return input, hx, batched


class RNNCell(RNNCellBase):
    """One step of an Elman RNN: ``h' = act(W_ih x + b_ih + W_hh h + b_hh)``."""

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh", device=None, dtype=None
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        """The next hidden state."""
        input, (h,), batched = self._prepare(input, None if hx is None else (hx,), 1)
        out = _rnn_step(input, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh, self.nonlinearity)
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: ``(h', c') = LSTMCell(x, (h, c))``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        """``(h', c')``."""
        input, (h, c), batched = self._prepare(input, hx, 2)
        h, c = _lstm_step(input, h, c, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        """The next hidden state."""
        input, (h,), batched = self._prepare(input, None if hx is None else (hx,), 1)
        out = _gru_step(input, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return out if batched else out.squeeze(0)
