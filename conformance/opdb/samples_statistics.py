"""Schema-driven sample overrides for the statistics ops (merged into :data:`.schema_samples.OVERRIDES`)."""

from __future__ import annotations

from .schema_samples import ints, lst, t, value

OVERRIDES: dict[str, dict] = {
    "combinations": {"self": t(4)},
    "gradient.scalarrayint": {"spacing": [1.0, 2.0]},
    "gradient.scalarrayarray": {"spacing": [2.0], "dim": [1]},
    "gradient.tensorarrayint": {"spacing": lst(t(2), t(3)), "self": t(2, 3)},
    "gradient.tensorarray": {"spacing": lst(value([0.0, 1.0, 3.0])), "dim": [1]},
    "histogram.bins_tensor": {"bins": value([0.0, 0.3, 0.5, 1.0])},
    "histogramdd": {"bins": [2, 3, 2]},
    "histogramdd.int_bins": {"bins": 3},
    "histogramdd.TensorList_bins": {"bins": lst(value([0.0, 0.5, 1.0]), value([0.2, 0.4, 0.8]), value([0.0, 1.0]))},
    "index_reduce": {"self": t(3, 2), "dim": 0, "index": ints(4, high=3), "source": t(4, 2), "reduce": "prod"},
    "is_nonzero": {"self": t(1)},
    "quantile": {"q": value([0.25, 0.5])},
    "quantile.scalar": {"q": 0.25},
    "nanquantile": {"q": value([0.25, 0.5])},
    "nanquantile.scalar": {"q": 0.75},
    "nuclear_norm.dim": {"dim": [0, 1]},
    "unique_dim_consecutive": {"self": ints(4, 2, high=2)},
}
