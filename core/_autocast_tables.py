"""Autocast cast-policy tables: PyTorch's lists, as data.

Each table maps a cast policy to the operator names PyTorch registers under it
(``aten/src/ATen/autocast_mode.{h,cpp}``; see ``pytorch-facts.md`` §5):

- ``lower_precision``: eligible tensor arguments are cast to the autocast dtype;
- ``fp32``: eligible tensor arguments are cast to float32;
- ``fp32_set_opt_dtype``: the op's ``dtype`` argument is set to float32 unless the
  caller gave one (PyTorch's ``fp32_append_dtype`` norms are listed here too: the
  overloads without a ``dtype`` argument have their arguments cast to float32);
- ``promote``: eligible tensor arguments are cast to the widest floating dtype among them.

A name is an operator packet (``"sum"``: every functional overload) or one overload
(``"conv_transpose2d.input"``). The tables are PyTorch's lists as they are: names
that opweave's catalog lacks are kept here and skipped when the policy is built
(``tests/test_autocast.py`` lists them). The mechanism lives in ``_autocast``;
the tables in effect for a device are ``opweave.autocast_policy(device_type)``.

``DEVICE_TABLES`` names the table of a device type; any other device type whose
backend declares an ``autocast_dtype`` gets ``GENERIC_GPU`` (PyTorch's CUDA list).
"""

from __future__ import annotations

from types import MappingProxyType

CATEGORIES = ("lower_precision", "fp32", "fp32_set_opt_dtype", "promote")

_CONV = (
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_tbc",
    "conv_transpose1d",
    "conv_transpose2d.input",
    "conv_transpose3d.input",
)

_FFT = tuple(
    "fft_" + n
    for n in ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn")
    + ("hfft", "ihfft")
)

_CPU_LINALG = tuple(
    "linalg_" + n
    for n in (
        "cond",
        "matrix_rank",
        "matrix_norm",
        "solve",
        "cholesky",
        "svdvals",
        "eigvals",
        "eigvalsh",
        "inv",
        "householder_product",
        "tensorinv",
        "tensorsolve",
        "qr",
        "cholesky_ex",
        "svd",
        "eig",
        "eigh",
        "lstsq",
        "inv_ex",
    )
)

_CPU_LOSSES = (
    "mse_loss",
    "cosine_embedding_loss",
    "nll_loss",
    "nll_loss2d",
    "hinge_embedding_loss",
    "poisson_nll_loss",
    "smooth_l1_loss",
    "cross_entropy_loss",
    "l1_loss",
    "huber_loss",
    "margin_ranking_loss",
    "soft_margin_loss",
    "triplet_margin_loss",
    "multi_margin_loss",
    "ctc_loss",
    "kl_div",
    "multilabel_margin_loss",
    "binary_cross_entropy_with_logits",
)

#: PyTorch's AutocastCPU list (default dtype: the CPU backend's ``autocast_dtype``, bfloat16).
CPU = MappingProxyType(
    {
        "lower_precision": _CONV
        + (
            "bmm",
            "mm",
            "linalg_vecdot",
            "baddbmm",
            "addmm",
            "_addmm_activation",
            "addbmm",
            "linear",
            "_convolution.deprecated",
            "matmul",
            "mkldnn_rnn_layer",
            "prelu",
            "scaled_dot_product_attention",
            "_native_multi_head_attention",
        ),
        "fp32": (
            "avg_pool3d",
            "binary_cross_entropy",
            "grid_sampler",
            "grid_sampler_2d",
            "grid_sampler_3d",
            "_grid_sampler_2d_cpu_fallback",
            "polar",
            "prod",
            "quantile",
            "nanquantile",
            "stft",
            "cdist",
            "trace",
            "view_as_complex",
            "cholesky",
            "cholesky_inverse",
            "cholesky_solve",
            "inverse",
            "lu_solve",
            "orgqr",
            "ormqr",
            "pinverse",
            "max_pool3d",
            "max_unpool2d",
            "max_unpool3d",
            "adaptive_avg_pool3d",
            "reflection_pad1d",
            "reflection_pad2d",
            "replication_pad1d",
            "replication_pad2d",
            "replication_pad3d",
        )
        + _CPU_LOSSES
        + _FFT
        + _CPU_LINALG
        + (
            "fake_quantize_per_tensor_affine",
            "geqrf",
            "_lu_with_info",
            "qr",
            "svd",
            "triangular_solve",
            "fractional_max_pool2d",
            "fractional_max_pool3d",
            "adaptive_max_pool3d",
            "multilabel_margin_loss_forward",
        ),
        "fp32_set_opt_dtype": (),
        "promote": ("stack", "cat", "index_copy"),
    }
)

#: PyTorch's AutocastCUDA list (default dtype: float16). The generic GPU table.
CUDA = MappingProxyType(
    {
        "lower_precision": (
            "_convolution",
            "convolution",
            "prelu",
            "addmm",
            "addmv",
            "addr",
            "matmul",
            "einsum",
            "mm",
            "mv",
            "linalg_vecdot",
            "linear",
            "addbmm",
            "baddbmm",
            "bmm",
            "chain_matmul",
            "linalg_multi_dot",
            "_thnn_fused_lstm_cell",
            "_thnn_fused_gru_cell",
            "lstm_cell",
            "gru_cell",
            "rnn_tanh_cell",
            "rnn_relu_cell",
            "_scaled_dot_product_flash_attention",
            "scaled_dot_product_attention",
            "cudnn_convolution",
            "cudnn_convolution_transpose",
        )
        + _CONV,
        "fp32": (
            "acos",
            "asin",
            "cosh",
            "erfinv",
            "exp",
            "expm1",
            "log",
            "log10",
            "log2",
            "log1p",
            "reciprocal",
            "rsqrt",
            "sinh",
            "tan",
            "pow",
            "softplus",
            "layer_norm",
            "native_layer_norm",
            "group_norm",
            "frobenius_norm.dim",
            "nuclear_norm",
            "cosine_similarity",
            "poisson_nll_loss",
            "cosine_embedding_loss",
            "nll_loss",
            "nll_loss2d",
            "hinge_embedding_loss",
            "kl_div",
            "l1_loss",
            "smooth_l1_loss",
            "huber_loss",
            "mse_loss",
            "margin_ranking_loss",
            "multilabel_margin_loss",
            "soft_margin_loss",
            "triplet_margin_loss",
            "multi_margin_loss",
            "binary_cross_entropy_with_logits",
            "dist",
            "pdist",
            "cdist",
            "renorm",
            "logsumexp",
            "upsample_nearest1d",
            "upsample_nearest2d",
            "upsample_nearest3d",
            "_upsample_nearest_exact1d",
            "_upsample_nearest_exact2d",
            "_upsample_nearest_exact3d",
            "upsample_linear1d",
            "upsample_bilinear2d",
            "_upsample_bilinear2d_aa",
            "upsample_trilinear3d",
            "upsample_bicubic2d",
            "_upsample_bicubic2d_aa",
        ),
        "fp32_set_opt_dtype": (
            "prod",
            "softmax",
            "log_softmax",
            "cumprod",
            "cumsum",
            "linalg_vector_norm",
            "linalg_matrix_norm",
            "sum",
            # PyTorch's fp32_append_dtype: these overloads have no dtype argument (cast to float32 here)
            "norm.Scalar",
            "norm.ScalarOpt_dim",
            "norm.names_ScalarOpt_dim",
        ),
        "promote": (
            "addcdiv",
            "addcmul",
            "atan2",
            "bilinear",
            "cross",
            "dot",
            "vdot",
            "grid_sampler",
            "index_put",
            "tensordot",
            "scatter_add",
        ),
    }
)

#: The generic GPU table: the default for device types (other than those in
#: ``DEVICE_TABLES``) whose backend declares an ``autocast_dtype``.
GENERIC_GPU = CUDA

#: Tables chosen by device type name.
DEVICE_TABLES = MappingProxyType({"cpu": CPU, "cuda": CUDA})
