# What python-cost.sh, java-cost.sh and node-cost.sh share: sourced, not run. The runs of a
# command, their medians, the BPF programs' own time as the kernel counts it, and the table.
# The script sets rc_name, hotstack, secs, runs, freq and the workload (rc_workload, an array, its
# duration the word @SECS@) first, and declares thr, us and once (associative arrays) unless it
# calls rc_runtime_bench, which does.
# shellcheck shell=bash disable=SC2154,SC2004

rc_skip() {
	echo "$rc_name: skipped: $*" >&2
	exit 77
}

# rc_setup: the checks every script makes, and its temporary folder ($tmp); exits 77 where
# hotstack may not sample or load BPF programs
rc_setup() {
	[ -x "$hotstack" ] || { echo "$rc_name: $hotstack missing: build first (ninja -C build)" >&2; exit 1; }
	tmp=$(mktemp -d "/tmp/hotstack-$rc_name.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	"$hotstack" record -q -o "$tmp/probe.folded" -- true >"$tmp/probe.log" 2>&1 ||
		rc_skip "hotstack record cannot sample: $(head -n1 "$tmp/probe.log")"
	grep -q 'frames needs' "$tmp/probe.log" && rc_skip "no permission to load BPF programs (run as root)"
	return 0
}

# rc_run NAME command...: the workload under the command, for $rc_secs seconds (its word @SECS@;
# DURATION by default); sets THR (the workload's rate: the first number it prints), OWN (its CPU
# s: the last number it prints), ALL (the CPU s of the command and its children, to the
# millisecond) and SAMPLES (from $tmp/NAME.folded, hotstack's)
rc_secs=
rc_run() {
	local name=$1 out
	shift
	out=$(
		"$@" "${rc_workload[@]/#@SECS@/${rc_secs:-$secs}}" 2>"$tmp/$name.err"
		times >"$tmp/$name.times"
	)
	read -r THR OWN <<<"$(awk '{for (i = 1; i <= NF; i++) if ($i ~ /^[0-9.]+$/) {if (f == "") f = $i; l = $i}} END {print f, l}' <<<"$out")"
	ALL=$(awk 'function s(t) {split(t, a, /[ms]/); return a[1] * 60 + a[2]}
		NR == 2 {printf "%.3f", s($1) + s($2)}' "$tmp/$name.times")
	SAMPLES=$(awk '{s += $NF} END {print s + 0}' "$tmp/$name.folded" 2>/dev/null)
	[ -n "${VERBOSE:-}" ] && echo "  $name (${rc_secs:-$secs} s): $THR it/s, workload $OWN s, all $ALL s, $SAMPLES samples" >&2
	return 0
}

# rc_record VARIANT [FLAG...]: `hotstack record FLAG...` run twice, for SHORT seconds (1 by
# default) and for DURATION. The longer run's rate goes to $tmp/VARIANT.thr; hotstack's CPU
# between the two runs over the samples between them (what one sample costs, the recording's
# start and end left out) to $tmp/VARIANT.us in µs; and what the recording costs once (the
# longer run's CPU less its samples' at that rate) to $tmp/VARIANT.once in ms.
rc_record() {
	local variant=$1 c0 n0
	shift
	rc_secs=${SHORT:-1}
	rc_run "$variant" "$hotstack" record -q "$@" -F "$freq" -o "$tmp/$variant.folded" --
	c0=$(awk -v all="$ALL" -v own="$OWN" 'BEGIN {print all - own}') n0=$SAMPLES
	rc_secs=
	rc_run "$variant" "$hotstack" record -q "$@" -F "$freq" -o "$tmp/$variant.folded" --
	echo "$THR" >>"$tmp/$variant.thr"
	awk -v all="$ALL" -v own="$OWN" -v n="$SAMPLES" -v c0="$c0" -v n0="$n0" \
		-v us="$tmp/$variant.us" -v once="$tmp/$variant.once" 'BEGIN {
		if (n <= n0)
			exit
		per = (all - own - c0) / (n - n0)
		print per * 1e6 >>us
		print (all - own - per * n) * 1e3 >>once
	}'
}

rc_median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

# rc_bpf_setup: turns kernel.bpf_stats_enabled on for the run (restored at exit); rc_bpf is
# empty where it cannot be
rc_bpf=
rc_bpf_setup() {
	local was
	rc_bpf=$(command -v bpftool || ls /usr/sbin/bpftool 2>/dev/null || true)
	was=$(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null || echo 0)
	if [ -n "$rc_bpf" ] && echo 1 >/proc/sys/kernel/bpf_stats_enabled 2>/dev/null; then
		# shellcheck disable=SC2064 # the value now
		trap "echo $was >/proc/sys/kernel/bpf_stats_enabled; rm -rf \"\$tmp\"" EXIT
	else
		rc_bpf=
	fi
}

# The BPF programs of the hotstack that this script starts next (other recordings may run on
# the machine, with programs of the same names), read from its descriptors every 0.1 s until it
# exits: "NAME RUN_TIME_NS RUN_CNT" a line in FILE, the last reading. The watcher is left to
# init as it starts, so that its CPU is not counted among this script's children.
rc_bpf_watch() {
	local out=$1
	rm -f "$out" "$out.done"
	[ -n "$rc_bpf" ] || { : >"$out.done"; return 0; }
	(rc_bpf_watcher "$out" </dev/null >/dev/null 2>&1 &)
}

rc_bpf_watcher() {
	local out=$1 pid='' p q ppid k v fd id ns cnt lines tries=0
	local -A names
	# hotstack: the process of its file whose parents lead to this script
	while [ -z "$pid" ] && ((tries++ < 600)); do
		for p in /proc/[0-9]*; do
			[ "$p/exe" -ef "$hotstack" ] || continue
			q=${p#/proc/}
			while [ -n "$q" ] && [ "$q" != 1 ] && [ "$q" != "$$" ]; do
				ppid=
				while read -r k v; do [ "$k" = PPid: ] && ppid=$v && break; done <"/proc/$q/status" 2>/dev/null
				q=$ppid
			done
			[ "$q" = "$$" ] && pid=${p#/proc/} && break
		done
		[ -n "$pid" ] || sleep 0.05
	done
	while [ -n "$pid" ] && [ -d "/proc/$pid" ]; do
		lines=
		for fd in /proc/"$pid"/fdinfo/*; do
			id='' ns='' cnt=''
			while read -r k v; do
				case $k in
				prog_id:) id=$v ;;
				run_time_ns:) ns=$v ;;
				run_cnt:) cnt=$v ;;
				esac
			done <"$fd" 2>/dev/null
			{ [ -n "$id" ] && [ -n "$cnt" ]; } || continue
			[ -n "${names[$id]:-}" ] ||
				names[$id]=$("$rc_bpf" prog show id "$id" 2>/dev/null | awk '{for (i = 1; i < NF; i++) if ($i == "name") {print $(i + 1); exit}}')
			lines+="${names[$id]:-?} $ns $cnt"$'\n'
		done
		[ -n "$lines" ] && printf '%s' "$lines" >"$out.new" && mv -f "$out.new" "$out"
		sleep 0.1
	done
	: >"$out.done"
}

# rc_bpf_ns FILE PROGRAM: after the run, waits for its watcher and adds PROGRAM's ns per run to
# FILE.ns (nothing where it did not run)
rc_bpf_ns() {
	local tries=0
	while [ ! -e "$1.done" ] && ((tries++ < 100)); do sleep 0.1; done
	[ -s "$1" ] && awk -v p="$2" '$1 == p && $3 > 0 {t += $2; n += $3} END {if (n) print t / n}' "$1" >>"$1.ns"
	return 0
}

# rc_row LABEL VARIANT BASE: a line of the table, with VARIANT's slowdown against BASE (alone),
# from the medians in thr[], us[] and once[]
rc_row() {
	local label=$1 v=$2 base=$3 slow cost one
	[ -n "${thr[$v]:-}" ] || return 0
	slow=$(awk -v a="${thr[$base]}" -v b="${thr[$v]}" 'BEGIN {printf "%.1f%%", (1 - b / a) * 100}')
	cost=${us[$v]:-} one=${once[$v]:-}
	[ -n "$cost" ] && cost=$(awk -v c="$cost" 'BEGIN {printf "%.1f", c}')
	[ -n "$one" ] && one=$(awk -v c="$one" 'BEGIN {printf "%.0f", c}')
	printf '%-34s %12s %10s %14s %10s\n' "$label" "${thr[$v]}" "$slow" "$cost" "$one"
}

# rc_header RATE: the table's first line (RATE: what the workload's rate counts)
rc_header() {
	printf '%-34s %12s %10s %14s %10s\n' "" "$1" "slowdown" "hotstack us/sample" "once ms"
}

# rc_medians VARIANT...: thr[], us[] and once[] from each variant's runs
rc_medians() {
	local v
	for v in "$@"; do
		thr[$v]=$(rc_median <"$tmp/$v.thr")
		us[$v]=$( [ -s "$tmp/$v.us" ] && rc_median <"$tmp/$v.us")
		once[$v]=$( [ -s "$tmp/$v.once" ] && rc_median <"$tmp/$v.once")
	done
}

# rc_bpf_line WHAT: the BPF programs' time per sample with the reader (the .bpf.ns of variant
# "rt") and without it ("none"). The readers run by tail calls from the dispatcher that is
# attached to the events, and the kernel counts a program's time only where it is entered
# from the event, so the reader's time is the dispatcher's with it less the dispatcher's
# without it.
rc_bpf_line() {
	local with without
	with=$( [ -s "$tmp/rt.bpf.ns" ] && rc_median <"$tmp/rt.bpf.ns")
	without=$( [ -s "$tmp/none.bpf.ns" ] && rc_median <"$tmp/none.bpf.ns")
	[ -n "$with" ] || return 0
	awk -v a="$with" -v b="$without" -v what="$1" 'BEGIN {
		printf "the BPF programs: %.0f ns per sample in the kernel with %s", a, what
		if (b != "")
			printf ", %.0f without (the reader: %.0f ns)", b, a - b
		print " (kernel.bpf_stats_enabled)"
	}'
}

# rc_record_pair OFF FLAG ON: `hotstack record FLAG` (variant OFF: the reader left out) and
# `hotstack record` (variant ON), each's rate and costs kept, and the BPF programs' time of its
# shorter run (the one its watcher finds)
rc_record_pair() {
	local variant bpf
	for variant in "$1" "$3"; do
		bpf=rt
		[ "$variant" = "$1" ] && bpf=none
		rc_bpf_watch "$tmp/$bpf.bpf"
		if [ "$bpf" = none ]; then rc_record "$variant" "$2"; else rc_record "$variant"; fi
		rc_bpf_ns "$tmp/$bpf.bpf" hs_rt_dispatch
	done
}

# rc_runtime_bench TITLE FLAG FRAMES LABEL REGEX NAMED: the whole bench of a runtime read from
# outside, against a native program. RUNS times: the runtime's workload (rc_workload) alone,
# under `hotstack record FLAG` (its reader left out), under `hotstack record` and under `perf
# record -g` for scale, then the native program ($native) alone and under `hotstack record`.
# Prints TITLE, the table of medians (LABEL: the reader's row), the share of the runtime's
# samples whose lines match REGEX (an awk regular expression: NAMED, named) in each run, the
# ratios of FRAMES' cost per sample to FLAG's and to the native program's, and the BPF time.
rc_runtime_bench() {
	local title=$1 flag=$2 frames=$3 label=$4 re=$5 named=$6 variant i
	local -a work=("${rc_workload[@]}") share=()
	declare -gA thr us once
	for variant in alone off on perf native-alone native; do
		: >"$tmp/$variant.thr"
		: >"$tmp/$variant.us"
		: >"$tmp/$variant.once"
	done
	for ((i = 1; i <= runs; i++)); do
		rc_workload=("${work[@]}")
		rc_run alone env
		echo "$THR" >>"$tmp/alone.thr"
		rc_record_pair off "$flag" on
		# that the reader did read
		share+=("$(awk -v re="$re" '{n += $NF} $0 ~ re {h += $NF} END {printf "%.0f%%", n ? h / n * 100 : 0}' "$tmp/on.folded")")
		if command -v perf >/dev/null; then
			rc_run perf perf record -q -g -F "$freq" -o "$tmp/perf.data" --
			echo "$THR" >>"$tmp/perf.thr"
		fi
		rc_workload=("$native" @SECS@)
		rc_run native-alone env
		echo "$THR" >>"$tmp/native-alone.thr"
		rc_record native
	done
	rc_medians alone off on perf native-alone native
	echo "$title"
	rc_header "rounds/s"
	rc_row "alone" alone alone
	rc_row "hotstack record $flag" off alone
	rc_row "hotstack record ($label)" on alone
	rc_row "perf record -g (for scale)" perf alone
	printf '%-34s %12s\n' "native program (record-workload)" "iterations/s"
	rc_row "alone" native-alone native-alone
	rc_row "hotstack record" native native-alone
	echo "samples with $named named, with $frames: ${share[*]}"
	awk -v a="${us[off]}" -v b="${us[on]}" -v c="${us[native]}" -v what="$frames" -v flag="$flag" 'BEGIN {
		if (a > 0)
			printf "%s cost %.2fx the CPU per sample of the same recording with %s\n", what, b / a, flag
		if (c > 0)
			printf "%s cost %.2fx the CPU per sample of a native program'\''s recording (target: 2x at most)\n", what, b / c
	}'
	rc_bpf_line "$frames"
}
