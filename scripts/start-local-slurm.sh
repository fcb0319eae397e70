#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Starts a one-node Slurm on this machine (slurmctld + slurmd on localhost, munge for authentication), for
# testing gmb's srun launcher. Idempotent: what already runs is left alone; a slurm.conf not written by this
# script is never replaced. Installs nothing: needs Debian's slurm-wlm and munge (apt-get install slurm-wlm
# munge) and root. Works without systemd (containers): the daemons are started directly.
#   scripts/start-local-slurm.sh          start (or check) and wait until the node is idle
#   scripts/start-local-slurm.sh --stop   stop the daemons this script started (by their pid files)
# Environment: GMB_SLURM_CPUS (default: max(2, nproc)), GMB_SLURM_CONF (default /etc/slurm/slurm.conf).
set -euo pipefail

CONF="${GMB_SLURM_CONF:-/etc/slurm/slurm.conf}"
MARK="# written by gmb scripts/start-local-slurm.sh"
NODE="$(hostname -s)"
NPROC="$(nproc)"
CPUS="${GMB_SLURM_CPUS:-$(( NPROC > 2 ? NPROC : 2 ))}"
RUN=/run/gmb-slurm
LOGS=/var/log/slurm

say() { echo "start-local-slurm: $*" >&2; }
die() { echo "start-local-slurm: error: $*" >&2; exit 2; }

[[ "$(id -u)" == 0 ]] || die "run as root (it starts munged, slurmctld and slurmd)"
for b in munged munge slurmctld slurmd srun sinfo scontrol; do
  command -v "$b" >/dev/null || die "$b not found: apt-get install slurm-wlm munge"
done

pid_alive() { [[ -f "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

if [[ "${1:-}" == "--stop" ]]; then
  for p in "$RUN/slurmd.pid" "$RUN/slurmctld.pid"; do
    if pid_alive "$p"; then kill "$(cat "$p")"; say "stopped $(basename "$p" .pid)"; fi
  done
  exit 0
fi

# --- munge ------------------------------------------------------------------------------------------------
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  if [[ ! -s /etc/munge/munge.key ]]; then
    say "creating /etc/munge/munge.key"
    if command -v mungekey >/dev/null; then mungekey --create --keyfile=/etc/munge/munge.key
    else dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none; fi
    chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
  fi
  install -d -o munge -g munge -m 0755 /run/munge
  install -d -o munge -g munge -m 0700 /var/lib/munge /var/log/munge
  say "starting munged"
  runuser -u munge -- munged
  for _ in $(seq 1 20); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.5; done
  munge -n | unmunge >/dev/null || die "munge does not work (see /var/log/munge/munged.log)"
fi

# --- slurm.conf ---------------------------------------------------------------------------------------------
if [[ -f "$CONF" ]] && ! grep -qF "$MARK" "$CONF"; then
  say "$CONF exists and was not written by this script: using it as it is"
else
  mkdir -p "$(dirname "$CONF")"
  cat > "$CONF.new" <<EOF
$MARK
ClusterName=gmblocal
SlurmctldHost=$NODE
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CryptoType=crypto/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$RUN/slurmd.pid
SlurmctldLogFile=$LOGS/slurmctld.log
SlurmdLogFile=$LOGS/slurmd.log
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
InactiveLimit=0
KillWait=5
MinJobAge=60
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$CPUS State=UNKNOWN
PartitionName=debug Nodes=$NODE Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
  if [[ -f "$CONF" ]] && cmp -s "$CONF" "$CONF.new"; then rm "$CONF.new"; else mv "$CONF.new" "$CONF"; say "wrote $CONF"; fi
fi
install -d -m 0755 "$RUN" "$LOGS" /var/spool/slurmctld /var/spool/slurmd

# --- daemons ------------------------------------------------------------------------------------------------
if ! pid_alive "$RUN/slurmctld.pid" && ! scontrol ping 2>/dev/null | grep -q "UP"; then
  say "starting slurmctld"
  slurmctld -f "$CONF"
fi
for _ in $(seq 1 30); do scontrol ping 2>/dev/null | grep -q "UP" && break; sleep 0.5; done
scontrol ping | grep -q "UP" || die "slurmctld did not come up (see $LOGS/slurmctld.log)"
if ! pid_alive "$RUN/slurmd.pid"; then
  say "starting slurmd"
  slurmd -f "$CONF"
fi

# --- wait for the node -----------------------------------------------------------------------------------
state=""
for _ in $(seq 1 60); do
  state="$(sinfo -h -n "$NODE" -o %T 2>/dev/null | head -n 1)"
  case "$state" in
    idle*|mixed*|allocated*) break ;;
    down*|drain*|fail*) scontrol update NodeName="$NODE" State=RESUME 2>/dev/null || true ;;
  esac
  sleep 1
done
case "$state" in
  idle*|mixed*|allocated*) ;;
  *) die "node $NODE is '${state:-unknown}' (see $LOGS/slurmd.log, $LOGS/slurmctld.log; scontrol show node $NODE)" ;;
esac
say "Slurm is up: node $NODE ($CPUS CPUs, $state), partition debug; MPI plugins: $(srun --mpi=list 2>&1 | tr -s ' \n' ' ')"
