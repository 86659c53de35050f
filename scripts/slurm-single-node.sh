#!/usr/bin/env bash
# Start a real single-node Slurm on this machine (Debian's slurm-wlm + munge), for the
# Slurm test and for trying profiles/slurm by hand. Idempotent: a running cluster is left
# as it is. Needs root (apt-get, daemons). Prints "slurm ready" when `sinfo` shows the node.
#
# The recipe is the one measured in ../shared/DESIGN.md: proctrack/linuxproc, task/none,
# no cgroup.conf, no accounting, one node with the real CPUs and memory, SlurmUser=root.
set -euo pipefail

if sinfo -h -o %T 2>/dev/null | grep -qE 'idle|mix|alloc'; then
  echo "slurm ready (already running)"; exit 0
fi

if ! command -v slurmctld >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq slurm-wlm >/dev/null
fi

node=$(hostname -s)
cpus=$(nproc)
mem_mb=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 512 ))
mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge
cat > /etc/slurm/slurm.conf <<CONF
ClusterName=wirebench
SlurmctldHost=${node}
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ReturnToService=2
MinJobAge=30
NodeName=${node} CPUs=${cpus} RealMemory=${mem_mb} State=UNKNOWN
PartitionName=main Nodes=${node} Default=YES MaxTime=INFINITE State=UP
CONF
rm -f /etc/slurm/cgroup.conf

# munge: its key, its run folder owned by munge, and the daemon running as munge.
if [ ! -s /etc/munge/munge.key ]; then
  dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none
fi
chown munge:munge /etc/munge/munge.key /run/munge
chmod 400 /etc/munge/munge.key
chmod 755 /run/munge
pgrep -x munged >/dev/null || su -s /bin/sh munge -c /usr/sbin/munged

pgrep -x slurmctld >/dev/null || slurmctld
pgrep -x slurmd >/dev/null || slurmd

for _ in $(seq 60); do
  if sinfo -h -o %T 2>/dev/null | grep -qE 'idle|mix|alloc'; then
    echo "slurm ready"; exit 0
  fi
  scontrol update nodename="${node}" state=resume >/dev/null 2>&1 || true
  sleep 1
done
echo "slurm did not come up; see /var/log/slurm/" >&2
exit 1
