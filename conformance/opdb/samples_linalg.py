"""Schema-driven sample overrides for the linalg ops (merged into :data:`.schema_samples.OVERRIDES`)."""

from __future__ import annotations

import opweave as ow

from .schema_samples import ints, lst, spd, t

SQ = {"*": t(3, 3)}
PIVOTS = ints(3, low=1, high=4, dtype=ow.int32)


def _group(spec, *names) -> dict:
    return dict.fromkeys(names, spec)


OVERRIDES: dict[str, dict] = {
    **_group(SQ, "linalg_det", "det", "linalg_slogdet", "slogdet", "linalg_inv", "inverse", "linalg_inv_ex"),
    **_group(SQ, "linalg_eig", "linalg_eigvals", "linalg_matrix_exp", "matrix_exp", "linalg_lu_factor"),
    **_group(SQ, "linalg_lu_factor_ex", "linalg_lu", "linalg_cond", "linalg_matmul"),
    "logdet": {"self": spd()},
    **_group({"n": 2, "self": t(3, 3)}, "linalg_matrix_power", "matrix_power"),
    **_group({"self": spd()}, "linalg_cholesky", "cholesky", "linalg_cholesky_ex", "linalg_eigh", "linalg_eigvalsh"),
    "cholesky_inverse": {"self": spd()},
    **_group({"A": spd(), "B": t(3, 2)}, "linalg_solve", "linalg_solve_ex"),
    "linalg_lstsq": {"self": t(4, 3), "b": t(4, 2)},
    "linalg_solve_triangular": {"self": spd(), "B": t(3, 2), "upper": True},
    "triangular_solve": {"self": t(3, 2), "A": spd()},
    "cholesky_solve": {"self": t(3, 2), "input2": spd()},
    "linalg_householder_product": {"input": t(3, 2), "tau": t(2)},
    "orgqr": {"self": t(3, 2), "input2": t(2)},
    "ormqr": {"self": t(3, 2), "input2": t(2), "input3": t(3, 2)},
    "linalg_lu_solve": {"LU": spd(), "pivots": PIVOTS, "B": t(3, 2)},
    **_group({"self": spd()}, "linalg_ldl_factor", "linalg_ldl_factor_ex"),
    "linalg_ldl_solve": {"LD": spd(), "pivots": PIVOTS, "B": t(3, 2)},
    "lu_unpack": {"LU_data": t(3, 3), "LU_pivots": PIVOTS},
    "lu_solve": {"self": t(3, 2), "LU_data": spd(), "LU_pivots": PIVOTS},
    "linalg_matrix_norm": {"ord": 1},
    "linalg_matrix_norm.str_ord": {"ord": "fro"},
    "linalg_norm.ord_str": {"ord": "fro"},
    "linalg_matrix_rank": {"tol": 0.1},
    "linalg_matrix_rank.tol_tensor": {"tol": t()},
    "linalg_pinv": {"rcond": 1e-5},
    "linalg_pinv.rcond_tensor": {"rcond": t()},
    "linalg_cond.p_str": {"self": t(3, 3), "p": "fro"},
    "linalg_multi_dot": {"tensors": lst(t(2, 3), t(3, 4), t(4))},
    "chain_matmul": {"matrices": lst(t(2, 3), t(3, 2))},
    "linalg_vander": {"x": t(3)},
    "tensordot": {"other": t(3, 2), "dims_self": [1], "dims_other": [0]},
    "einsum": {"equation": "ij,jk->ik", "tensors": lst(t(2, 3), t(3, 2))},
    "linalg_tensorinv": {"self": t(2, 3, 6)},
    "linalg_tensorsolve": {"self": t(2, 3, 6), "other": t(2, 3)},
}
