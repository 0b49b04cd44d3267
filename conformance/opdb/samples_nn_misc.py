"""Schema-driven sample overrides for the nn misc ops (merged into :data:`.schema_samples.OVERRIDES`)."""

from __future__ import annotations

from .schema_samples import ints, t, value

_BN = {"input": t(2, 3, 4), "weight": t(3), "bias": t(3), "running_mean": t(3), "running_var": t(3)}
_BN_ARGS = {**_BN, "training": True, "momentum": 0.1, "eps": 1e-5}
_NLL = {"self": t(2, 3), "target": ints(2, high=3)}
_BAG = {"weight": t(5, 3), "indices": value([0, 2, 4, 1]), "offsets": value([0, 2])}
_QKV = {"query": t(2, 2, 3, 4), "key": t(2, 2, 5, 4), "value": t(2, 2, 5, 4)}

OVERRIDES: dict[str, dict] = {
    # norms
    "batch_norm": {**_BN_ARGS, "cudnn_enabled": False},
    "native_batch_norm": _BN_ARGS,
    "_native_batch_norm_legit": _BN_ARGS,
    "_batch_norm_with_update": {**_BN, "momentum": 0.1, "eps": 1e-5},
    "_segment_reduce": {"data": t(5, 2), "reduce": "sum", "lengths": value([2, 0, 3])},
    "bilinear": {"input1": t(2, 3), "input2": t(2, 4), "weight": t(5, 3, 4), "bias": t(5)},
    "resize_": {"self": t(2, 3), "size": [3, 2]},
    "resize_as_": {"self": t(2, 3), "the_template": t(3, 2)},
    "_native_batch_norm_legit.no_stats": {k: v for k, v in _BN_ARGS.items() if not k.startswith("running_")},
    "_native_batch_norm_legit_no_training": {
        "input": t(2, 3, 4),
        "weight": t(3),
        "bias": t(3),
        "running_mean": t(3),
        "running_var": t(3),
        "momentum": 0.1,
        "eps": 1e-5,
    },
    "instance_norm": {**_BN, "use_input_stats": True, "momentum": 0.1, "eps": 1e-5, "cudnn_enabled": False},
    "layer_norm": {"input": t(2, 3), "normalized_shape": [3]},
    "native_layer_norm": {"input": t(2, 3), "normalized_shape": [3], "weight": t(3), "bias": t(3), "eps": 1e-5},
    "rms_norm": {"input": t(2, 3), "normalized_shape": [3]},
    "group_norm": {"input": t(2, 4, 3), "num_groups": 2},
    "native_group_norm": {
        "input": t(2, 4, 3),
        "weight": t(4),
        "bias": t(4),
        "N": 2,
        "C": 4,
        "HxW": 3,
        "group": 2,
        "eps": 1e-5,
    },
    "local_response_norm": {"input": t(2, 4, 3), "size": 3},
    # activations and dropout
    "glu": {"self": t(2, 4)},
    "prelu": {"weight": t(3)},
    "_prelu_kernel": {"weight": t(3)},
    "rrelu": {"training": True},
    "rrelu_with_noise": {"noise": t(2, 3), "training": True},
    "feature_dropout": {"input": t(2, 3, 4), "p": 0.5, "train": True},
    "feature_alpha_dropout": {"input": t(2, 3, 4), "p": 0.5, "train": True},
    # losses
    "nll_loss": _NLL,
    "nll_loss_nd": _NLL,
    "nll_loss2d": {"self": t(2, 3, 2, 2), "target": ints(2, 2, 2, high=3)},
    "cross_entropy_loss": _NLL,
    "multi_margin_loss": {"self": t(2, 3), "target": ints(2, high=3)},
    "multilabel_margin_loss": {"self": t(2, 3), "target": value([[0, 2, -1], [1, -1, 0]])},
    "cosine_embedding_loss": {"input1": t(2, 3), "input2": t(2, 3), "target": value([1.0, -1.0])},
    "ctc_loss": {"log_probs": t(5, 2, 4), "targets": ints(2, 3, low=1, high=4), "blank": 0, "reduction": 1},
    "ctc_loss.IntList": {"input_lengths": [5, 4], "target_lengths": [3, 2]},
    "ctc_loss.Tensor": {"input_lengths": value([5, 4]), "target_lengths": value([3, 2])},
    "poisson_nll_loss": {"log_input": True, "full": False, "eps": 1e-8, "reduction": 1},
    # embeddings, distances, attention
    "embedding": {"weight": t(5, 3), "indices": ints(2, 3, high=5)},
    "embedding_renorm": {"self": t(5, 3), "indices": value([0, 2]), "max_norm": 0.5, "norm_type": 2.0},
    "embedding_bag": _BAG,
    "embedding_bag.padding_idx": {
        **_BAG,
        "scale_grad_by_freq": False,
        "mode": 1,
        "sparse": False,
        "per_sample_weights": None,
        "include_last_offset": False,
        "padding_idx": 2,
    },
    "_embedding_bag": _BAG,
    "_embedding_bag_forward_only": _BAG,
    "_euclidean_dist": {"x1": t(4, 3), "x2": t(5, 3)},
    "batch_norm_stats": {"input": t(2, 3, 4), "eps": 1e-5},
    "batch_norm_elemt": {"input": t(2, 3, 4), "mean": t(3), "invstd": t(3), "eps": 1e-5},
    "_weight_norm": {"v": t(4, 3), "g": t(4, 1)},
    "one_hot": {"self": ints(2, 3, high=4), "num_classes": 4},
    "pdist": {"self": t(4, 3)},
    "_pdist_forward": {"self": t(4, 3)},
    "cdist": {"x1": t(4, 3), "x2": t(5, 3)},
    "_cdist_forward": {"x1": t(4, 3), "x2": t(5, 3), "p": 2.0, "compute_mode": None},
    "scaled_dot_product_attention": _QKV,
    "_scaled_dot_product_attention_math": _QKV,
}
