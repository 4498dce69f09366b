# The AF/BE study's setting (examples/afbe.toml) in ns-2 2.35's diffserv
# module: web-like Reno flows from an AF cloud node and a BE cloud node
# through a bottleneck whose dsRED edge queue marks AF with TSW2CM (one
# profile for the AF aggregate) and runs RIO-C on two precedences.
#
#   ns afbe.tcl LOAD AF_SHARE SEED STOP END [CONTROL [FLOWS [TRACE]]]
#
# prints one line per completed flow, "flow CLOUD BYTES START COMPLETION",
# COMPLETION from the SYN to the ACK of the last data packet (ns-2's
# one-way TCP sends a 40-byte SYN and no other control packet), then the
# queue's per-codepoint statistics ("CP TOTAL TX LDROPS EDROPS").
#
# CONTROL 1 adds, from each flow's source, the three 40-byte packets a
# two-way TCP sends through the bottleneck beside its SYN and data: the
# handshake's ACK one round trip (44 ms) after the SYN, the FIN when the
# flow is done and the ACK of the peer's FIN a round trip later (UDP
# packets carrying nothing, metered and queued as the flow's own).
#
# FLOWS, a file of "CLOUD BYTES START" lines, replaces the Poisson
# arrivals with those flows (bench/afbe_sweep.py --same-flows writes the
# ones undertow's run started), so both simulators carry the same load;
# an empty FLOWS keeps the Poisson arrivals.
#
# TRACE, a file name, gets ns-2's trace of the bottleneck queue (each
# packet's arrival "+", start of service "-" and drop "d").

set load [lindex $argv 0]
set afshare [lindex $argv 1]
set seed [lindex $argv 2]
set stop [lindex $argv 3]
set end [lindex $argv 4]
set control [expr {[llength $argv] > 5 ? [lindex $argv 5] : 0}]
set flows [expr {[llength $argv] > 6 ? [lindex $argv 6] : ""}]
set trace [expr {[llength $argv] > 7 ? [lindex $argv 7] : ""}]

set rate 10e6
set sizes {1 3 6 10 20 45 90}
set pkt 1000

set ns [new Simulator]
set A [$ns node]
set B [$ns node]
set S [$ns node]
set R [$ns node]
set D [$ns node]
$ns simplex-link $A $S 100Mb 1ms DropTail
$ns simplex-link $S $A 100Mb 1ms DropTail
$ns simplex-link $B $S 100Mb 1ms DropTail
$ns simplex-link $S $B 100Mb 1ms DropTail
$ns simplex-link $S $R 10Mb 20ms dsRED/edge
$ns simplex-link $R $S 10Mb 20ms DropTail
$ns simplex-link $R $D 100Mb 1ms DropTail
$ns simplex-link $D $R 100Mb 1ms DropTail
foreach l [list [$ns link $A $S] [$ns link $S $A] [$ns link $B $S] [$ns link $S $B] [$ns link $R $S] [$ns link $R $D] [$ns link $D $R]] {
    [$l queue] set limit_ 1000
}

if {$trace ne ""} {
    set tf [open $trace w]
    $ns trace-queue $S $R $tf
}
set q [[$ns link $S $R] queue]
$q meanPktSize [expr $pkt + 40]
$q set numQueues_ 1
$q setNumPrec 2
$q setMREDMode RIO-C
$q set limit_ 100
# AF (code point 10) metered against half the bottleneck; out of profile 11.
$q addPolicyEntry [$A id] -1 TSW2CM 10 [expr $rate / 2] 1.0
$q addPolicyEntry [$B id] -1 Null 0
$q addPolicerEntry TSW2CM 10 11
$q addPolicerEntry Null 0
$q addPHBEntry 10 0 0
$q addPHBEntry 11 0 1
$q addPHBEntry 0 0 1
$q configQ 0 0 40 70 0.02
$q configQ 0 1 10 40 0.1

Agent/TCP set packetSize_ $pkt
Agent/TCP set window_ 20
Agent/TCP set windowInit_ 2
Agent/TCP set minrto_ 0.2
Agent/TCP set maxrto_ 60

set rng [new RNG]
$rng seed $seed
set mean_bytes 0
foreach n $sizes { set mean_bytes [expr $mean_bytes + $n * $pkt] }
set mean_bytes [expr double($mean_bytes) / [llength $sizes]]

# One UDP agent per cloud sends its flows' control packets.
foreach {cloud node} [list af $A be $B] {
    set ctl($cloud) [new Agent/UDP]
    $ns attach-agent $node $ctl($cloud)
    set null [new Agent/Null]
    $ns attach-agent $D $null
    $ns connect $ctl($cloud) $null
}
set rtt 0.044

Agent/TCP instproc done {} {
    global ns info control ctl rtt
    set now [$ns now]
    set i $info($self)
    puts "flow [lindex $i 0] [lindex $i 1] [lindex $i 2] [expr $now - [lindex $i 2]]"
    if {$control} {
        $ctl([lindex $i 0]) send 40
        $ns at [expr $now + $rtt] "$ctl([lindex $i 0]) send 40"
    }
}

proc start_flow {cloud node n} {
    global ns D info control ctl rtt
    set tcp [new Agent/TCP/Reno]
    set sink [new Agent/TCPSink]
    $ns attach-agent $node $tcp
    $ns attach-agent $D $sink
    $ns connect $tcp $sink
    set info($tcp) [list $cloud [expr $n * 1000] [$ns now]]
    $tcp advanceby $n
    if {$control} {
        $ns at [expr [$ns now] + $rtt] "$ctl($cloud) send 40"
    }
}

if {$flows ne ""} {
    set fh [open $flows]
    while {[gets $fh line] >= 0} {
        lassign $line cloud bytes t
        set node [expr {$cloud eq "af" ? $A : $B}]
        $ns at $t "start_flow $cloud $node [expr {$bytes / $pkt}]"
    }
    close $fh
}

# Poisson arrivals per cloud at its share of the offered load.
foreach {cloud node share} [list af $A $afshare be $B [expr 1.0 - $afshare]] {
    set lambda [expr $load * $share * $rate / (8.0 * $mean_bytes)]
    if {$flows ne "" || $lambda <= 0} continue
    set gap [new RandomVariable/Exponential]
    $gap set avg_ [expr 1.0 / $lambda]
    $gap use-rng $rng
    set pick [new RandomVariable/Uniform]
    $pick set min_ 0
    $pick set max_ [llength $sizes]
    $pick use-rng $rng
    set t [$gap value]
    while {$t < $stop} {
        set k [expr int([$pick value])]
        if {$k >= [llength $sizes]} { set k [expr [llength $sizes] - 1] }
        $ns at $t "start_flow $cloud $node [lindex $sizes $k]"
        set t [expr $t + [$gap value]]
    }
}

proc finish {} {
    global q trace tf
    $q printStats
    if {$trace ne ""} { close $tf }
    exit 0
}
$ns at $end "finish"
$ns run
