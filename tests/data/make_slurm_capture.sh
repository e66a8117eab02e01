#!/usr/bin/env bash
# Re-make tests/data/hpcds1mpi-slurm.sacct-all.txt from the test Slurm (scripts/slurm-up).
# Submits a few small jobs (MPI over both nodes, 2 threads per task, exit 3, scancel), waits
# for them, and writes `sacct -P --format=ALL` for exactly those jobs. Needs ~30 s.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${PYTHON:-$HERE/../../.venv/bin/python}
export SLURM_CONF=${SLURM_CONF:-/tmp/hpcds1mpi-slurm/slurm.conf}
W=$(mktemp -d)
cd "$W"
ids=()
ids+=($(sbatch --parsable -J mpi_two_nodes -N2 --ntasks-per-node=1 -o /dev/null \
  --wrap="srun --mpi=pmi2 $PY -c 'from mpi4py import MPI; import time; MPI.COMM_WORLD.Barrier(); time.sleep(3)'"))
ids+=($(sbatch --parsable -J threads_two -N1 -n1 -c2 -o /dev/null --wrap="srun -c2 sleep 2"))
ids+=($(sbatch --parsable -J exit_three -N1 -n1 -o /dev/null --wrap="sleep 1; exit 3"))
ids+=($(sbatch --parsable -J to_cancel -N1 -n1 -o /dev/null --wrap="srun sleep 120"))
sleep 4
scancel "${ids[3]}"
for _ in $(seq 1 120); do
  [ -z "$(squeue -h -j "$(IFS=,; echo "${ids[*]}")" 2>/dev/null)" ] && break
  sleep 0.5
done
sleep 2  # slurmdbd receives the end records asynchronously
sacct -P --format=ALL -j "$(IFS=,; echo "${ids[*]}")" > "$HERE/hpcds1mpi-slurm.sacct-all.txt"
echo "wrote $HERE/hpcds1mpi-slurm.sacct-all.txt (jobs ${ids[*]})"
rm -rf "$W"
