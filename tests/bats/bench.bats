#!/usr/bin/env bats
# tests/bench: the bench scripts refuse bad options by name, before they
# build, format or time anything.  (The benchmarks themselves are run by
# hand, never by make check: doc/BENCHMARKS.md.)

load helper

B=$SUFS_SRCDIR/bench

# refused SCRIPT MESSAGE ARGS...: exit 2, the message, nothing on stdout
refused() {
	local script=$1 msg=$2
	shift 2
	run --separate-stderr "$B/$script" "$@"
	assert_equal "$status" 2
	assert_equal "$output" ""
	assert_equal "$stderr" "bench/$script: $msg"
}

bats_require_minimum_version 1.5.0

@test "each bench script refuses an option with no value, and a count that is not one" {
	for s in modes mkfs fsck bigdir snapshot pagefault fuse; do
		refused $s "--runs needs a value (see --help)" --runs
		refused $s "--runs x: not a whole number of at least 1" --runs x
		refused $s "--runs 0: not a whole number of at least 1" --runs 0
		refused $s "--runs -3: not a whole number of at least 1" --runs -3
	done
	refused floor "--rounds 2.5: not a whole number of at least 1" --rounds 2.5
	refused floor "--files needs a value (see --help)" --files
	refused bigdir "--counts 1e5: not a whole number of at least 1" --counts "100 1e5"
	refused snapshot "--ops : not a whole number of at least 1" --ops ""
	refused modes "unknown option --fast (see --help)" --fast
	refused modes "--iops 0: not a whole number of at least 1" --iops 0
	refused modes "--mbps needs --iops" --mbps 100
	refused modes "--modes: no mode fast (async, softdep, sync)" --modes softdep,fast
	refused floor "unknown option '--runs' (see --help)" --runs 3
	refused fuse "--only: no workload fsck (untar, rmrf, postmark, build, fsync)" --only untar,fsck
	refused fsck "--sizes: 10y10: not FILES nor DxF" --sizes 10y10:1M
	refused mix "--files 5: not a whole number of at least 10" --files 5
	refused drain "--files 500,x: not a list of whole numbers of at least 10" --files 500,x
	refused write-bound "--files 500,x: not a list of whole numbers of at least 10" --files 500,x
}

@test "bench/write-bound: what softdep writes for a sync is never below the bound, directory moves too" {
	require_cmd python3
	local mix line f
	for mix in files dirs; do
		run --separate-stderr "$B/write-bound" $([ $mix = dirs ] && echo --dirs) \
			--files 100,300 "$SUFS_BUILDDIR"
		assert_success
		assert_equal "${#lines[@]}" 3
		for line in "${lines[@]:1}"; do
			read -ra f <<<"$line"
			# mix files | settled pending free depth cycles bound | softdep async | ...
			[ "${f[0]}" = $mix ]
			[ "${f[8]}" -eq $((f[3] + f[4] - f[5] + f[6] + f[7])) ]
			[ "${f[8]}" -le "${f[10]}" ]
			[ "${f[8]}" -gt 0 ]
			[ $mix = dirs ] || [ "${f[3]}" -eq 0 ]
		done
	done
	# the directory mix of 300 renames a directory again before its
	# first rename reached the disk: the settle's writes are counted
	[ "${f[3]}" -gt 0 ]
}

@test "bench/write-bound: two blocks whose last writes wait for each other cost one more write" {
	require_cmd python3
	# A and B must each go twice (a chain leaves each and comes back, through
	# C and D); A's second write waits for B's, and B's for A's
	run python3 - "$B/write-bound" <<'EOF'
import importlib.machinery, importlib.util, sys
loader = importlib.machinery.SourceFileLoader("wb", sys.argv[1])
spec = importlib.util.spec_from_loader("wb", loader)
wb = importlib.util.module_from_spec(spec)
loader.exec_module(wb)
ups = {1: ("A", []), 2: ("C", [1]), 3: ("B", []), 4: ("D", [3]),
       5: ("A", [2]), 6: ("B", [4]), 7: ("A", [2, 6]), 8: ("B", [4, 5])}
need, level = wb.depth_writes(set("ABCD"), ups)
print(sorted(need.items()), wb.disjoint_cycles(set("ABCD") - set(need), ups),
      wb.last_write_cycles(set("ABCD"), ups, need, level))
EOF
	assert_success
	assert_output "[('A', 2), ('B', 2)] 0 1"
}

@test "bench/floor.patch applies to the library as it is" {
	# the floor is measured on a copy of the tree with this patch: one that
	# no longer applies stops bench/floor before it measures anything
	git -C "$SUFS_SRCDIR" rev-parse --git-dir >/dev/null 2>&1 || skip "not a git checkout"
	run git -C "$SUFS_SRCDIR" apply --check "$B/floor.patch"
	assert_success
}

@test "bench/mix prints the same script for the same seed, and a sync at the end" {
	run "$B/mix" --files 100 --seed 4
	assert_success
	local one=$output
	run "$B/mix" --files 100 --seed 4
	assert_equal "$output" "$one"
	assert_equal "${lines[-1]}" "sync"
	[[ $one == *"rename "* ]]
	run "$B/mix" --files 1000 --seed 4 --dirs --no-sync --fsync
	assert_equal "${lines[-1]}" "fsync /fsync-probe"
	[[ $output == *"rmdir "* ]]
}

@test "bench/ab refuses a missing work directory and a bad count, before it copies anything" {
	refused ab "--work $T/none: no such directory" --work "$T/none" x y a=b
	refused ab "--rounds 0: not a count of at least 1" --rounds 0 x y a=b
	run --separate-stderr "$B/ab" "$T/nothing.txt" "$T/nothing.img" a=b
	assert_equal "$status" 2
	assert_equal "$stderr" "bench/ab: $T/nothing.txt: no such file"
}

@test "bench/ab pairs the rounds: each command's CPU ratio to the first, per round, with quartiles" {
	printf 'x\n' >"$T/s.txt"
	truncate -s 1M "$T/i.img"
	# the first command spends (almost) nothing, the second hashes 20 MB:
	# every round's ratio is far above 1, the base's exactly 1
	run --separate-stderr "$B/ab" --rounds 3 --work "$T" "$T/s.txt" "$T/i.img" \
		idle='sh -c "exit 0"' \
		busy='sh -c "head -c 20000000 /dev/zero | md5sum >/dev/null"'
	assert_success
	assert_line --index 1 --regexp '^idle .* paired +1\.000x \[1\.000, 1\.000\]$'
	[[ ${lines[2]} =~ paired\ +([0-9.]+)x\ \[([0-9.]+),\ ([0-9.]+)\]$ ]]
	awk -v m="${BASH_REMATCH[1]}" -v lo="${BASH_REMATCH[2]}" -v hi="${BASH_REMATCH[3]}" \
		'BEGIN { exit !(m > 2 && lo <= m && m <= hi) }'
}

@test "bench/iocost refuses bad options, a missing file and a directory that is no build" {
	refused iocost "--rounds 0: not a whole number of at least 1" --rounds 0 a b c
	refused iocost "--modes fast: not a list of async, softdep and sync" --modes fast a b c
	refused iocost "--work $T/none: no such directory" --work "$T/none" a b c
	refused iocost "$T/none.txt: no such file" "$T/none.txt" "$T/none.img" "$SUFS_BUILDDIR"
	printf 'sync\n' >"$T/s.txt"
	: >"$T/i.img"
	refused iocost "$T: no replay/sufs-replay in it (a build directory?)" "$T/s.txt" "$T/i.img" "$T"
}

@test "bench/iocost replays an I/O log as it was written: the same image, and a bad log is refused" {
	"$MKFS" -q "$T/start.img" 8M
	cp "$T/start.img" "$T/run.img"
	printf '%s\n' "mkdir /d" "create /d/f" "write /d/f 0 300K 1" "sync" "unlink /d/f" \
		"create /g" "write /g 0 10K 2" "sync" >"$T/s.txt"
	"$REPLAY" --mode softdep --iolog "$T/log" "$T/run.img" "$T/s.txt"
	cp "$T/start.img" "$T/replayed.img"
	run "$B/iocost" --apply "$T/log" "$T/replayed.img"
	assert_success
	cmp "$T/run.img" "$T/replayed.img"
	head -c 100 "$T/log" >"$T/cut"
	run --separate-stderr "$B/iocost" --apply "$T/cut" "$T/replayed.img"
	assert_equal "$status" 8
	assert_equal "$stderr" "bench/iocost: $T/cut: cut short at byte 100"
	printf 'nothing here, not a log at all' >"$T/bad"
	run --separate-stderr "$B/iocost" --apply "$T/bad" "$T/replayed.img"
	assert_equal "$status" 8
	assert_equal "$stderr" "bench/iocost: $T/bad: not an I/O log of sufs-replay"
}
