#!/usr/bin/env bash
# Installs the system packages Shoal's tests use on Debian/Ubuntu: Chromium for the end-to-end tests,
# OpenSSH (sshd, ssh-keygen, ssh-agent) for the SSH tests, which run their own private sshd instances;
# Slurm (slurmctld, slurmd, srun) and munge for the Slurm launcher's tests, which start a private two-node
# Slurm on this host; NumPy, pandas and Pillow, with which the tests write data as users do (the README's
# data examples); h5py, with which the tests write Keras's .h5 and .keras files in Keras's own layout;
# PyTorch and OpenBLAS for the benchmarks' peers (Debian's python3-torch calls libblas.so.3, which is
# netlib's reference BLAS, about 20x slower, unless that alternative points at OpenBLAS: set here when
# it does not).
# Skips what is already there; uses sudo when not run as root.
set -euo pipefail
need=()
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then need+=(chromium); fi
if [ ! -x /usr/sbin/sshd ]; then need+=(openssh-server); fi
if ! command -v ssh-keygen >/dev/null 2>&1 || ! command -v ssh-agent >/dev/null 2>&1; then need+=(openssh-client); fi
if ! command -v slurmctld >/dev/null 2>&1 || ! command -v slurmd >/dev/null 2>&1; then need+=(slurm-wlm); fi
if ! command -v munged >/dev/null 2>&1; then need+=(munge); fi
if ! dpkg -s libopenblas0-pthread >/dev/null 2>&1; then need+=(libopenblas0-pthread); fi
for module in numpy:python3-numpy pandas:python3-pandas PIL:python3-pil h5py:python3-h5py torch:python3-torch; do
  if ! python3 -c "import ${module%%:*}" >/dev/null 2>&1; then need+=("${module#*:}"); fi
done
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
if [ ${#need[@]} -eq 0 ]; then
  echo "setup-debian: system packages already present"
else
  echo "setup-debian: installing ${need[*]}"
  $SUDO apt-get update -q -o DPkg::Lock::Timeout=600
  $SUDO apt-get install -y -q -o DPkg::Lock::Timeout=600 "${need[@]}"
fi
OPENBLAS=/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3
if [ -e "$OPENBLAS" ] && [ "$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3)" != "$(readlink -f "$OPENBLAS")" ]; then
  echo "setup-debian: pointing libblas.so.3 at OpenBLAS"
  $SUDO update-alternatives --set libblas.so.3-x86_64-linux-gnu "$OPENBLAS"
fi
