"""C (GCC's C11 with OpenMP): the generator's kernels compiled by the system C compiler for the host CPU.

Execution model. A kernel becomes three functions: the work item (the generated
body, ``static``), an unpacker that calls it with arguments read from an array of
pointers (``void **``: a pointer to each buffer address or by-value struct), and
the exported entry ``void name(void **args, const long *grid, const long *block)``
that runs the work groups in parallel (``#pragma omp parallel for``) and a group's
items one after another. A kernel that synchronises its group (a barrier: tree
reductions, local-memory tiles) runs each item of a group as a coroutine
(``ucontext``) that yields to the next at every barrier, so the group advances in
lockstep from barrier to barrier. Work-group-shared arrays are ``static
_Thread_local``: one group runs on one thread at a time. Ids are thread-local
(the current item's, set by the scheduler before it resumes an item).
"""

from __future__ import annotations

import re

from .base import Dialect

#: Everything a C kernel file includes first: OpenCL C's scalar type names, vector pairs for complex
#: values, bit casts, the integer and math built-ins the templates use, the work-item scheduler.
PRELUDE = r"""
#include <math.h>
#include <limits.h>
#include <float.h>
#include <tgmath.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#include <ucontext.h>
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
typedef struct { float x, y; } float2;
typedef struct { double x, y; } double2;
typedef struct { uint x, y, z, w; } uint4;
#define OW_BITCAST(T, v) (((union { __typeof__(v) a; T b; }){ .a = (v) }).b)
#define as_float(v) OW_BITCAST(float, v)
#define as_double(v) OW_BITCAST(double, v)
#define as_uint(v) OW_BITCAST(uint, v)
#define as_int(v) OW_BITCAST(int, v)
#define as_ulong(v) OW_BITCAST(ulong, v)
#define as_long(v) OW_BITCAST(long, v)
#define as_ushort(v) OW_BITCAST(ushort, v)
#define as_short(v) OW_BITCAST(short, v)
#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))
#define clamp(v, lo, hi) min(max((v), (lo)), (hi))
#define select(a, b, c) ((c) ? (b) : (a))
#define rsqrt(v) (1 / sqrt(v))
#define mad(a, b, c) ((a) * (b) + (c))
#define sinpi(v) sin(M_PI * (v))
#define cospi(v) cos(M_PI * (v))
static __inline__ uint ow_mul_hi32(uint a, uint b) { return (uint)(((ulong)a * b) >> 32); }
static __inline__ ulong ow_mul_hi64(ulong a, ulong b) { return (ulong)(((unsigned __int128)a * b) >> 64); }
#define mul_hi(a, b) _Generic((a) + (b), uint: ow_mul_hi32, default: ow_mul_hi64)(a, b)

static _Thread_local long ow_grp[3], ow_lid[3], ow_lsz[3], ow_ngrp[3];
static _Thread_local ucontext_t ow_sched, *ow_self;
#define OW_STACK (256 * 1024)
#define inline static __inline__

static _Thread_local int ow_done_flag;  /* set by a barrier: the item yielded, it has not returned */
static void ow_yield(void) { ow_done_flag = 1; swapcontext(ow_self, &ow_sched); }

typedef void (*ow_item_fn)(void **);
static _Thread_local ow_item_fn ow_fn;
static _Thread_local void **ow_args;
static void ow_trampoline(void) { ow_fn(ow_args); }

static void ow_group(ow_item_fn fn, void **args, int sync) {
    long n = ow_lsz[0] * ow_lsz[1] * ow_lsz[2];
    if (!sync) {
        for (long z = 0; z < ow_lsz[2]; z++)
            for (long y = 0; y < ow_lsz[1]; y++)
                for (long x = 0; x < ow_lsz[0]; x++) {
                    ow_lid[0] = x; ow_lid[1] = y; ow_lid[2] = z;
                    fn(args);
                }
        return;
    }
    static _Thread_local ucontext_t *items;
    static _Thread_local char *stacks;
    static _Thread_local long capacity;
    if (capacity < n) {
        free(items); free(stacks);
        items = malloc(n * sizeof(ucontext_t));
        stacks = malloc(n * OW_STACK);
        capacity = n;
    }
    char done[n];
    ow_fn = fn; ow_args = args;
    for (long i = 0; i < n; i++) {
        getcontext(&items[i]);
        items[i].uc_stack.ss_sp = stacks + i * OW_STACK;
        items[i].uc_stack.ss_size = OW_STACK;
        items[i].uc_link = &ow_sched;
        makecontext(&items[i], ow_trampoline, 0);
        done[i] = 0;
    }
    for (long left = n; left > 0;) {
        for (long i = 0; i < n; i++) {
            if (done[i]) continue;
            ow_lid[0] = i % ow_lsz[0]; ow_lid[1] = (i / ow_lsz[0]) % ow_lsz[1]; ow_lid[2] = i / (ow_lsz[0] * ow_lsz[1]);
            ow_self = &items[i];
            ow_done_flag = 0;
            swapcontext(&ow_sched, &items[i]);
            if (ow_done_flag == 0) { done[i] = 1; left--; }
        }
    }
}

static void ow_run(ow_item_fn fn, void **args, const long *grid, const long *block, int sync) {
    long groups = grid[0] * grid[1] * grid[2];
    #pragma omp parallel for schedule(static) if (groups > 1)
    for (long g = 0; g < groups; g++) {
        ow_ngrp[0] = grid[0]; ow_ngrp[1] = grid[1]; ow_ngrp[2] = grid[2];
        ow_lsz[0] = block[0]; ow_lsz[1] = block[1]; ow_lsz[2] = block[2];
        ow_grp[0] = g % grid[0]; ow_grp[1] = (g / grid[0]) % grid[1]; ow_grp[2] = g / (grid[0] * grid[1]);
        ow_group(fn, args, sync);
    }
}
"""

_PARAM = re.compile(r"^(.*?)([A-Za-z_]\w*)\s*$", re.S)


class CDialect(Dialect):
    """C for the host compiler: kernels are loops over work items (see the module docstring)."""

    name = "c"
    kernel_prefix = "static void"
    restrict = " restrict"
    math_names = {"abs": "fabs", "round": "rint", "maximum": "fmax", "minimum": "fmin", "remainder": "fmod"}

    def header(self, dtypes) -> str:
        """Nothing per dtype: the prelude (:data:`PRELUDE`) is prepended once by :meth:`program`."""
        return ""

    def kernel(self, name: str, params: list[str], body: str) -> str:
        """The work item ``name__item``, its unpacker and the exported entry ``name(args, grid, block)``."""
        unpack = []
        for i, p in enumerate(params):
            m = _PARAM.match(p.strip())
            ctype = m.group(1).strip()
            unpack.append(f"*({ctype}*)a[{i}]")
        sync = int("ow_yield()" in body)
        return (
            f"static void {name}__item({', '.join(params)})\n{{\n{body}\n}}\n"
            f"static void {name}__call(void **a) {{ {name}__item({', '.join(unpack)}); }}\n"
            f"void {name}(void **a, const long *grid, const long *block) "
            f"{{ ow_run({name}__call, a, grid, block, {sync}); }}\n"
        )

    def local_array(self, ctype: str, name: str, size: int) -> str:
        """``static _Thread_local`` array: shared by the items of the group running on this thread."""
        return f"static _Thread_local {ctype} {name}[{size}];"

    def global_id(self, axis: int = 0) -> str:
        """The group's first id plus the item's."""
        return f"(ow_grp[{axis}] * ow_lsz[{axis}] + ow_lid[{axis}])"

    def local_id(self, axis: int = 0) -> str:
        """The item's id in its group."""
        return f"ow_lid[{axis}]"

    def group_id(self, axis: int = 0) -> str:
        """The group's id."""
        return f"ow_grp[{axis}]"

    def local_size(self, axis: int = 0) -> str:
        """The group's size."""
        return f"ow_lsz[{axis}]"

    def barrier(self) -> str:
        """Yield to the next item of the group (all reach the barrier before any passes it)."""
        return "ow_yield();"

    global_barrier = barrier

    def bitcast(self, ctype: str, expr: str) -> str:
        """A union pun (``OW_BITCAST``)."""
        return f"OW_BITCAST({ctype}, {expr})"

    def function_prefix(self) -> str:
        """``inline`` (the prelude makes it ``static __inline__``)."""
        return "inline"

    def atomic_cas(self, bits: int, ptr: str, expected: str, value: str) -> str:
        """GCC's ``__sync_val_compare_and_swap``."""
        word = "ulong" if bits == 64 else "uint"
        return f"__sync_val_compare_and_swap(({word}*)({ptr}), {expected}, {value})"

    def atomic_max(self, ptr: str, value: str) -> str:
        """A compare-and-swap loop (``ow_atomic_max``)."""
        return f"ow_atomic_max((int*)({ptr}), {value})"

    def atomic_add(self, bits: int, ptr: str, value: str) -> str:
        """GCC's ``__sync_fetch_and_add``."""
        word = "long" if bits == 64 else "int"
        return f"__sync_fetch_and_add(({word}*)({ptr}), {value})"

    def atomics_header(self) -> str:
        """``ow_atomic_max`` (once)."""
        return (
            "#ifndef OW_ATOMIC_MAX\n#define OW_ATOMIC_MAX\n"
            "static __inline__ int ow_atomic_max(int *p, int v) { int old = *p;\n"
            "    while (old < v) { int seen = __sync_val_compare_and_swap(p, old, v); if (seen == old) break;"
            " old = seen; }\n    return old; }\n#endif\n"
        )


C = CDialect()


def program(source: str) -> str:
    """A whole C file: the prelude, then the generated ``source``."""
    return PRELUDE + source
