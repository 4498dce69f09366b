# red.tcl -- ns-2 (2.35): long TCP flows through a RED bottleneck, the
# setting bench/ns2/red_compare.py runs undertow on too.
#
#   src_i --100Mb, 1ms--> r1 ==10Mb, 20ms, RED==> r2 --100Mb, 1ms--> dst_i
#
# flows FTP sources over Agent/TCP/<variant> (packetSize_ 1460: 1500 B on
# the wire, window_ large enough never to bind), one TCPSink each (an ACK
# per packet; delack=1 for TCPSink/DelAck), started at uniform random
# times in [0, 1) s.
#
# Usage: ns red.tcl [key=value ...]   prints one line of key=value pairs:
#   arrivals, departures, early, forced (every other drop: past maxthresh
#   or an overflow), marks (packets leaving CE-marked), ave_mean (RED's average at each arrival, the mean of
#   its ave_ trace), ave_n (trace lines), ave_time_mean (its time average).
# keys: flows variant duration thresh maxthresh q_weight linterm gentle
#       wait limit rate delay seed delack ecn (1: Agent/TCP ecn_ and RED
#       setbit_) use_mark_p adaptive

array set P {flows 4 variant Newreno duration 200 thresh 5 maxthresh 15 q_weight 0.002
             linterm 10 gentle false wait true limit 50 rate 10Mb delay 20ms seed 1 delack 0 ecn 0 use_mark_p false adaptive 0}
foreach kv $argv {
    set i [string first = $kv]
    if {$i < 1} { puts stderr "bad argument $kv"; exit 1 }
    set k [string range $kv 0 [expr {$i-1}]]
    if {![info exists P($k)]} { puts stderr "unknown key $k"; exit 1 }
    set P($k) [string range $kv [expr {$i+1}] end]
}

# RED in packets, with the drop decision of the 1993 paper by default: no
# byte mode, no use_mark_p_, forced drops past maxthresh.
Queue/RED set bytes_ false
Queue/RED set queue_in_bytes_ false
Queue/RED set use_mark_p_ $P(use_mark_p)
Queue/RED set adaptive_ $P(adaptive)
Queue/RED set thresh_ $P(thresh)
Queue/RED set maxthresh_ $P(maxthresh)
Queue/RED set q_weight_ $P(q_weight)
Queue/RED set linterm_ $P(linterm)
Queue/RED set gentle_ $P(gentle)
Queue/RED set wait_ $P(wait)

Queue/RED set setbit_ [expr {$P(ecn) ? "true" : "false"}]
Agent/TCP set ecn_ $P(ecn)

Agent/TCP set packetSize_ 1460
Agent/TCP set window_ 100000

set ns [new Simulator]
ns-random $P(seed)
set rng [new RNG]
$rng seed $P(seed)

set r1 [$ns node]
set r2 [$ns node]
$ns duplex-link $r1 $r2 $P(rate) $P(delay) RED
$ns queue-limit $r1 $r2 $P(limit)
$ns queue-limit $r2 $r1 $P(limit)

set link [$ns link $r1 $r2]
set redq [$link queue]
set qmon [new QueueMonitor/ED]
$link attach-monitors [new SnoopQueue/In] [new SnoopQueue/Out] [new SnoopQueue/Drop] $qmon
set edsnoop [new SnoopQueue/EDrop]
$edsnoop set-monitor $qmon
$redq early-drop-target $edsnoop
$edsnoop target [$ns set nullAgent_]

set sinkclass [expr {$P(delack) ? "Agent/TCPSink/DelAck" : "Agent/TCPSink"}]
for {set i 0} {$i < $P(flows)} {incr i} {
    set s [$ns node]
    set d [$ns node]
    $ns duplex-link $s $r1 100Mb 1ms DropTail
    $ns duplex-link $r2 $d 100Mb 1ms DropTail
    $ns queue-limit $s $r1 10000
    set tcp [new Agent/TCP/$P(variant)]
    $ns attach-agent $s $tcp
    set sink [new $sinkclass]
    $ns attach-agent $d $sink
    $ns connect $tcp $sink
    set ftp [$tcp attach-app FTP]
    $ns at [$rng uniform 0 1] "$ftp start"
}

set avef [open [file join [pwd] red_ave.tr] w]
$redq trace ave_
$redq attach $avef

proc finish {} {
    global qmon avef P
    close $avef
    set n 0; set sum 0.0; set tsum 0.0; set lastt 0.0; set lastv 0.0
    set f [open red_ave.tr r]
    while {[gets $f line] >= 0} {
        lassign $line tag t v
        if {$tag ne "a"} continue
        incr n
        set sum [expr {$sum + $v}]
        set tsum [expr {$tsum + $lastv * ($t - $lastt)}]
        set lastt $t; set lastv $v
    }
    close $f
    file delete red_ave.tr
    set tsum [expr {$tsum + $lastv * ($P(duration) - $lastt)}]
    set early [$qmon set epdrops_]
    set drops [$qmon set pdrops_]
    puts [format "arrivals=%d departures=%d early=%d forced=%d marks=%d ave_mean=%.6f ave_n=%d ave_time_mean=%.6f" \
        [$qmon set parrivals_] [$qmon set pdepartures_] $early [expr {$drops - $early}] [$qmon set pmarks_] \
        [expr {$sum / $n}] $n [expr {$tsum / $P(duration)}]]
    exit 0
}
$ns at $P(duration) "finish"
$ns run
