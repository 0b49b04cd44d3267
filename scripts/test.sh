#!/usr/bin/env bash
# Install opweave with its test dependencies and plugins, lint, and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install --quiet -e ".[test,opencl,x86quant,distributed]"
python -m pip install --quiet -e examples/vendor_backend  # the example third-party backend, tested below
python -m pip install --quiet -e examples/compiler_backend  # the example compiler backend (C kernels from opweave_kernelgen)
ruff check .
ruff format --check .
# The ci hypothesis profile keeps no example database: every run draws afresh (pass --hypothesis-seed=N to repeat one).
export OPWEAVE_HYPOTHESIS_PROFILE="${OPWEAVE_HYPOTHESIS_PROFILE:-ci}"
status=0
python scripts/typecheck.py || status=$?  # mypy on the shipped stubs and examples/typed_usage.py (seconds)
python -m pytest -q -p no:cacheprovider -n auto --dist loadfile "$@" || status=$?
# The conformance suite against the reference backend, the example vendor backend and OpenCL (PoCL):
# OpenCL (mostly kernel compilation on a cold cache) runs beside the other two, one core each.
opweave conformance --backend opencl --profile quick --quiet > opencl-conformance.log 2>&1 &
opencl=$!
# A failing step does not skip the others: each reports, and the script fails if any did.
# The CPU run checks every per-signature plan against its decomposition (docs/plans.md).
OPWEAVE_CHECK_PLANS=1 opweave conformance --backend cpu --profile quick --quiet || status=$?
opweave conformance --backend vnpu --profile quick --quiet || status=$?
opweave conformance --backend cpu --distributed 2 || status=$?  # the c10d:: collectives across 2 ranks (MPI)
opweave conformance --backend vnpu --distributed 2 || status=$?  # the same staged through host memory
# The compiler-backend example on a sample of prim families (a cold kernel cache compiles each program with
# gcc -O3; the whole quick profile is a local check: opweave conformance --backend ccpu)
opweave conformance --backend ccpu --profile quick --quiet \
    --ops 'add.Tensor,mul.Tensor,sum.dim_IntList,softmax.int,mm,sort*,cumsum,where.self,index_select,prims::uniform' || status=$?
# The CPU backend's compiled C kernels at every size (docs/cpu-kernels.md), on the ops that have one (seconds;
# the whole quick profile on the c path is a local check: OPWEAVE_CPU_KERNELS=c opweave conformance --backend cpu)
OPWEAVE_CPU_KERNELS=c opweave conformance --backend cpu --profile quick --quiet --gradients 0 \
    --ops 'prims::exp*,prims::log*,prims::tanh,prims::sigmoid,prims::erf,prims::sqrt,prims::add,prims::sub,prims::mul,prims::div,prims::sum,prims::amax,prims::amin,prims::var,add.Tensor,sub.Tensor,mul.Tensor,div.Tensor,sum,sum.dim_IntList,mean*,var*,amax,amin,*softmax*,layer_norm,rms_norm,cross_entropy_loss,gelu,silu' || status=$?
wait "$opencl" || status=$?
cat opencl-conformance.log
exit "$status"
