"""Schema-driven sample overrides for the nn layers ops (merged into :data:`.schema_samples.OVERRIDES`)."""

from __future__ import annotations

from .schema_samples import t, value  # spec builders: t, ints, bools, cplx, lst, value, spd, OnCpu

_CONV = {"stride": [1], "padding": [0], "dilation": [1], "output_padding": [0], "groups": 1, "transposed": False}
_FLAGS = {"benchmark": False, "deterministic": False, "cudnn_enabled": False, "allow_tf32": False}
_POOL = {"self": t(1, 2, 4, 5), "kernel_size": [2, 2]}
_POOL1 = {"self": t(2, 6), "kernel_size": [2]}
_POOL3 = {"self": t(1, 2, 3, 4, 4), "kernel_size": [2, 2, 2]}
_UP_VEC = {"input": t(1, 2, 3, 4), "align_corners": False}  # the .vec overloads name their tensor "input"
_UP = {**_UP_VEC, "self": t(1, 2, 3, 4)}

OVERRIDES: dict[str, dict] = {
    "convolution": {"input": t(1, 2, 5), "weight": t(4, 2, 3), **_CONV},
    "_convolution": {"input": t(1, 2, 5, 5), "weight": t(3, 2, 2, 2), **_CONV, **_FLAGS},
    "conv_tbc": {"self": t(5, 2, 3), "weight": t(2, 3, 4), "bias": t(4), "pad": 1},
    "_upsample_bilinear2d_aa": {**_UP, "output_size": [2, 3]},
    "_upsample_bicubic2d_aa": {**_UP, "output_size": [5, 2]},
    "_upsample_bilinear2d_aa.vec": {**_UP_VEC, "output_size": None, "scale_factors": [0.5, 0.7]},
    "_upsample_bicubic2d_aa.vec": {**_UP_VEC, "output_size": [2, 7], "scale_factors": None},
    "conv1d": {"input": t(1, 2, 5), "weight": t(3, 2, 2)},
    "conv2d": {"input": t(1, 2, 4, 5), "weight": t(3, 2, 2, 2)},
    "conv3d": {"input": t(1, 2, 3, 4, 4), "weight": t(3, 2, 2, 2, 2)},
    "conv1d.padding": {"input": t(1, 2, 5), "weight": t(3, 2, 2), "padding": "same"},
    "conv2d.padding": {"input": t(1, 2, 4, 5), "weight": t(3, 2, 2, 3), "padding": "same"},
    "conv3d.padding": {"input": t(1, 2, 3, 4, 4), "weight": t(3, 2, 2, 2, 2), "padding": "same"},
    "conv_transpose1d": {"input": t(1, 2, 5), "weight": t(2, 3, 2)},
    "conv_transpose2d": {"input": t(1, 2, 4, 5), "weight": t(2, 3, 2, 2)},
    "conv_transpose3d": {"input": t(1, 2, 3, 4, 4), "weight": t(2, 3, 2, 2, 2)},
    **{f"max_pool{d}d": p for d, p in ((1, _POOL1), (2, _POOL), (3, _POOL3))},
    **{f"max_pool{d}d_with_indices": p for d, p in ((1, _POOL1), (2, _POOL), (3, _POOL3))},
    **{f"avg_pool{d}d": p for d, p in ((1, _POOL1), (2, _POOL), (3, _POOL3))},
    "adaptive_avg_pool1d": {"self": t(2, 6), "output_size": [4]},
    "adaptive_max_pool1d": {"self": t(2, 6), "output_size": [4]},
    **{f"{p}adaptive_avg_pool2d": {"self": t(1, 2, 5, 4), "output_size": [3, 2]} for p in ("", "_")},
    **{f"{p}adaptive_avg_pool3d": {"self": t(1, 2, 3, 5, 4), "output_size": [2, 3, 2]} for p in ("", "_")},
    "adaptive_max_pool2d": {"self": t(1, 2, 5, 4), "output_size": [3, 2]},
    "adaptive_max_pool3d": {"self": t(1, 2, 3, 5, 4), "output_size": [2, 3, 2]},
    "fractional_max_pool2d": {
        "self": t(1, 2, 5, 6),
        "kernel_size": [2, 2],
        "output_size": [3, 4],
        "random_samples": t(1, 2, 2, low=0, high=1),
    },
    "fractional_max_pool3d": {
        "self": t(2, 4, 5, 6),
        "kernel_size": [2, 2, 2],
        "output_size": [2, 3, 4],
        "random_samples": t(1, 2, 3, low=0, high=1),
    },
    "max_unpool2d": {
        "self": t(1, 2, 2, 2),
        "indices": value([[[[0, 3], [9, 14]], [[5, 2], [8, 15]]]]),
        "output_size": [4, 4],
    },
    "max_unpool3d": {
        "self": t(1, 1, 1, 2, 2),
        "indices": value([[[[[0, 3], [9, 14]]]]]),
        "output_size": [2, 4, 4],
        "stride": [2, 2, 2],
        "padding": [0, 0, 0],
    },
    "im2col": {"self": t(1, 2, 4, 5), "kernel_size": [2, 2], "dilation": [1, 1], "padding": [1, 0], "stride": [2, 1]},
    "col2im": {
        "self": t(1, 8, 6),
        "output_size": [3, 4],
        "kernel_size": [2, 2],
        "dilation": [1, 1],
        "padding": [0, 0],
        "stride": [1, 1],
    },
    "pixel_shuffle": {"self": t(1, 8, 2, 3), "upscale_factor": 2},
    "pixel_unshuffle": {"self": t(1, 2, 4, 6), "downscale_factor": 2},
    "channel_shuffle": {"self": t(1, 6, 2, 2), "groups": 2},
    "native_channel_shuffle": {"self": t(1, 6, 2, 2), "groups": 3},
    "reflection_pad1d": {"self": t(2, 5), "padding": [2, 1]},
    "reflection_pad2d": {"self": t(1, 3, 4), "padding": [2, 1, 0, 2]},
    "reflection_pad3d": {"self": t(1, 3, 3, 4), "padding": [1, 2, 0, 1, 2, 0]},
    "replication_pad1d": {"self": t(2, 5), "padding": [2, 1]},
    "replication_pad2d": {"self": t(1, 3, 4), "padding": [2, 1, 0, 2]},
    "replication_pad3d": {"self": t(1, 3, 3, 4), "padding": [1, 2, 0, 1, 2, 0]},
    "_pad_circular": {"self": t(1, 3, 4), "pad": [2, 1, 1, 0]},
    "_pad_enum": {"self": t(1, 3, 4), "pad": [2, 1, 1, 0], "mode": 1},
    **{f"upsample_nearest{d}d": {"self": t(1, 2, *(3, 4, 5)[:d]), "output_size": [5, 7, 6][:d]} for d in (1, 2, 3)},
    **{
        f"_upsample_nearest_exact{d}d": {"self": t(1, 2, *(3, 4, 5)[:d]), "output_size": [5, 7, 6][:d]}
        for d in (1, 2, 3)
    },
    **{
        f"{p}{d}d.vec": {"input": t(1, 2, *(3, 4, 5)[:d]), "output_size": None, "scale_factors": [1.5, 2.0, 0.7][:d]}
        for d in (1, 2, 3)
        for p in ("upsample_nearest", "_upsample_nearest_exact")
    },
    "upsample_linear1d": {"self": t(1, 2, 4), "output_size": [7], "align_corners": False},
    "upsample_bilinear2d": {**_UP, "output_size": [5, 7]},
    "upsample_bicubic2d": {**_UP, "output_size": [5, 7]},
    "upsample_trilinear3d": {"self": t(1, 2, 2, 3, 4), "output_size": [3, 5, 6], "align_corners": True},
    "upsample_linear1d.vec": {"input": t(1, 2, 4), "output_size": [7], "align_corners": False, "scale_factors": None},
    "upsample_bilinear2d.vec": {**_UP_VEC, "output_size": None, "scale_factors": [1.5, 2.0]},
    "upsample_bicubic2d.vec": {**_UP_VEC, "output_size": [5, 7], "scale_factors": None},
    "upsample_trilinear3d.vec": {
        "input": t(1, 2, 2, 3, 4),
        "output_size": None,
        "align_corners": True,
        "scale_factors": [2.0, 1.5, 1.0],
    },
    **{
        name: {
            "input": t(1, 2, 3, 4),
            "grid": t(1, 2, 3, 2, low=-1.1, high=1.1),
            "interpolation_mode": 0,
            "padding_mode": 0,
            "align_corners": False,
        }
        for name in ("grid_sampler", "grid_sampler_2d")
    },
    "grid_sampler_3d": {
        "input": t(1, 2, 2, 3, 4),
        "grid": t(1, 2, 2, 3, 3, low=-1.1, high=1.1),
        "interpolation_mode": 0,
        "padding_mode": 1,
        "align_corners": True,
    },
    "affine_grid_generator": {"theta": t(2, 2, 3), "size": [2, 1, 3, 4], "align_corners": False},
}
