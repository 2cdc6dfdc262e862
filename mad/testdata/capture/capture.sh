#!/bin/bash
set -u
cd /tmp/madcap
export IBSIM_SOCKNAME=madcap$$
mkfifo ctl.fifo
ibsim -s net < ctl.fifo > ibsim.log 2>&1 &
SIMPID=$!
exec 7> ctl.fifo
trap 'exec 7>&-; kill $SIMPID 2>/dev/null; wait $SIMPID; rm -f ctl.fifo' EXIT
sleep 1
con() { echo "$1" >&7; sleep 0.2; }
export LD_PRELOAD=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so
mkdir -p osm
OSM_CACHE_DIR=$PWD/osm OSM_TMP_DIR=$PWD/osm timeout 30 opensm -o -f $PWD/osm/log > osm.out 2>&1
cap() { name=$1; shift; strace -f -xx -s 400 -e trace=write,read -o st.$name "$@" > out.$name 2>&1; echo "$name rc=$?"; }
cap sw_nodeinfo smpquery -D nodeinfo 0
cap sw_nodedesc smpquery -D nodedesc 0
cap sw_portinfo0 smpquery -D portinfo 0 0
cap sw_portinfo1 smpquery -D portinfo 0 1
cap sw_switchinfo smpquery -D switchinfo 0
SIM_HOST=h1 cap h1_nodeinfo smpquery -D nodeinfo 0
SIM_HOST=h1 cap h1_nodedesc smpquery -D nodedesc 0
SIM_HOST=h1 cap h1_portinfo smpquery -D portinfo 0 1
cap lft ibroute 1
cap sw_mlnxepi smpquery -D mlnxextportinfo 0 1
for c in 'PerformanceSet "sw1"[1] PortCounters.SymbolErrorCounter=1234' 'PerformanceSet "sw1"[1] PortCounters.LinkErrorRecoveryCounter=255' 'PerformanceSet "sw1"[1] PortCounters.LinkDownedCounter=7' 'PerformanceSet "sw1"[1] PortCounters.PortRcvErrors=513' 'PerformanceSet "sw1"[1] PortCounters.LocalLinkIntegrityErrors=15' 'PerformanceSet "sw1"[1] PortCounters.ExcessiveBufferOverrunErrors=3' 'PerformanceSet "sw1"[1] PortCounters.PortXmitWait=4000000000' 'PerformanceSet "sw1"[1] PortCounters.PortXmitDiscards=65535' 'PerformanceSet "sw1"[1] PortCounters.VL15Dropped=9' 'PerformanceSet "sw1"[1] PortCounters.PortRcvConstraintErrors=2' 'PerformanceSet "sw1"[2] PortCountersExtended.PortXmitData=123456789012' 'PerformanceSet "sw1"[2] PortCountersExtended.PortRcvPkts=987654321' 'PerformanceSet "sw1"[2] PortCountersExtended.PortUnicastXmitPkts=5555'; do con "$c"; done
cap sw_perf perfquery 1 1
cap sw_perfx perfquery -x 1 2
cap sw_perfall perfquery 1 255
SIM_HOST=h1 cap h1_perf perfquery
SIM_HOST=h1 cap h1_perfx perfquery -x
cap sw_reset perfquery -R 1 1
