"""Row softmax and log-softmax for CPU devices: one work item per contiguous row, three passes over it.

Pass one takes the row's maximum (NaN propagates, as ``amax`` does), pass two sums
``exp(x - max)`` (softmax stores the exponentials in the output on the way), pass
three divides by the sum (softmax) or subtracts ``max + log(sum)`` (log-softmax).
On a CPU device a work item is one loop iteration, so a row is a sequential,
prefetch-friendly stream; rows whose start and length are multiples of the vector
width go through vector types (so ``exp`` is the vectorized one), others one
element at a time. :func:`group_program` is the GPU form: a work group per row.
"""

from __future__ import annotations

from .common import header


def program(dialect, dtype: str, lanes: int) -> str:
    """The ``softmax_rows`` and ``log_softmax_rows`` kernels for ``dtype`` (float32 or float64), ``lanes`` wide."""
    t, w = dialect.type_name(dtype), lanes
    v, g = dialect.vector_type(t, w), dialect.global_prefix
    params = [dialect.buffer(t, "out"), dialect.buffer(t, "x", const=True), "long xo", "long rows", "long n"]
    element = dialect.aligned_load(v, "row", "i")
    lane_max = "".join(f" m = fmax(m, {dialect.lane('vm', k)});" for k in range(w))
    lane_sum = "".join(f" s += {dialect.lane('vs', k)};" for k in range(w))
    head = f"""    long r = {dialect.global_id(0)};
    if (r >= rows) return;
    {g}const {t}* row = x + xo + r * n;
    {g}{t}* dst = out + r * n;
    {t} m = -INFINITY, s = 0;
    int vector = (xo % {w}) == 0 && (n % {w}) == 0;
    if (vector) {{
        {v} vm = {dialect.splat(v, "-INFINITY")};
        int nan = 0;
        for (long i = 0; i < n / {w}; ++i) {{ {v} e = {element}; vm = fmax(vm, e); nan |= any(isnan(e)); }}
       {lane_max}
        if (nan) m = NAN;
    }} else {{
        for (long i = 0; i < n; ++i) m = (row[i] > m || isnan(row[i])) ? row[i] : m;
    }}
"""

    def body(log: bool) -> str:
        keep_vector = "" if log else " " + dialect.aligned_store(v, "e", "dst", "i")
        keep = "" if log else " dst[i] = e;"
        sums = f"""    if (vector) {{
        {v} vs = {dialect.splat(v, "0")};
        for (long i = 0; i < n / {w}; ++i) {{ {v} e = exp({element} - m);{keep_vector} vs += e; }}
       {lane_sum}
    }} else {{
        for (long i = 0; i < n; ++i) {{ {t} e = exp(row[i] - m);{keep} s += e; }}
    }}
"""
        if log:
            return head + sums + "    s = log(s);\n    for (long i = 0; i < n; ++i) dst[i] = (row[i] - m) - s;"
        return head + sums + "    for (long i = 0; i < n; ++i) dst[i] = dst[i] / s;"

    return (
        header(dialect, [dtype])
        + dialect.kernel("softmax_rows", params, body(False))
        + dialect.kernel("log_softmax_rows", params, body(True))
    )


def group_program(dialect, dtype: str, subgroup: int) -> str:
    """The ``softmax_rows`` and ``log_softmax_rows`` kernels for GPUs: one work group per row (float32/float64).

    The same three passes, each striding the row by the work group (coalesced); each group-wide
    reduction is a subgroup shuffle tree (``subgroup`` lanes, the dialect's
    ``subgroup_shuffle_down``), then one subgroup over the subgroups' results. The second and
    third passes read the row again from cache, so memory sees about one read and one write per
    element. Launch with one group per row, at most ``subgroup`` subgroups per group.
    """
    t, g, f = dialect.type_name(dtype), dialect.global_prefix, dialect.function_prefix()
    params = [dialect.buffer(t, "out"), dialect.buffer(t, "x", const=True), "long xo", "long rows", "long n"]
    lid, size = dialect.local_id(0), dialect.local_size(0)
    steps = []
    o = subgroup // 2
    while o:
        steps.append(o)
        o //= 2

    def tree(combine: str) -> str:
        return "".join(f" v = {combine.format('v', dialect.subgroup_shuffle_down('v', str(o)))};" for o in steps)

    def reduce(var: str, combine: str, identity: str) -> str:
        return f"""    {{
        {t} v = {var};{tree(combine)}
        if (lane == 0) shared[sub] = v;
        {dialect.barrier()}
        v = (lid < {size} / {subgroup}) ? shared[lane] : ({t})({identity});
        if (sub == 0) {{{tree(combine)} }}
        if (lid == 0) shared[0] = v;
        {dialect.barrier()}
        {var} = shared[0];
        {dialect.barrier()}
    }}
"""

    def body(log: bool) -> str:
        finish = (
            f"    {t} ls = log(s);\n    for (long i = lid; i < n; i += {size}) dst[i] = (row[i] - m) - ls;"
            if log
            else f"    for (long i = lid; i < n; i += {size}) dst[i] = exp(row[i] - m) / s;"
        )
        return (
            f"""    {dialect.local_array(t, "shared", subgroup)}
    long r = {dialect.group_id(0)};
    if (r >= rows) return;
    long lid = {lid};
    long lane = lid % {subgroup}, sub = lid / {subgroup};
    {g}const {t}* row = x + xo + r * n;
    {g}{t}* dst = out + r * n;
    {t} m = -INFINITY;
    for (long i = lid; i < n; i += {size}) m = ow_row_max_{t}(m, row[i]);
"""
            + reduce("m", f"ow_row_max_{t}({{}}, {{}})", "-INFINITY")
            + f"""    {t} s = 0;
    for (long i = lid; i < n; i += {size}) s += exp(row[i] - m);
"""
            + reduce("s", "{} + {}", "0")
            + finish
        )

    helper = f"{f} {t} ow_row_max_{t}({t} a, {t} b) {{ return (b > a || isnan(b)) ? b : a; }}\n"
    return (
        header(dialect, [dtype])
        + helper
        + dialect.kernel("softmax_rows", params, body(False))
        + dialect.kernel("log_softmax_rows", params, body(True))
    )
