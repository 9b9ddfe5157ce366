#!/usr/bin/env bats
# sufs-replay --crash-check: the crash harness proves "only leaks" on a
# bounded sample of the crash corpus (tests/crash, `make crash-check` runs
# all of it), and its controls show it can fail: async mode and each
# deliberately broken ordering rule are caught, with the state, the
# findings, the saved image and a command that checks that state again.

bats_require_minimum_version 1.5.0
load helper

setup() {
	export SOURCE_DATE_EPOCH=1700000000
	BASE=$T/base.img
	"$MKFS" -q -b 1024 "$BASE" 4M
	"$REPLAY" "$BASE" "$SUFS_SRCDIR/tests/crash/tree.replay"
	chmod a-w "$BASE"
	cd "$T"
}

# crash ARGS...: sufs-replay --crash-check, stdout and stderr apart
crash() {
	run --separate-stderr "$REPLAY" "$@"
}

@test "the quick crash corpus: soft updates leave only leaks" {
	run "$SUFS_SRCDIR/tests/crash/run" --quick --sample 30
	assert_success
	assert_output --regexp "softdep: [0-9]+ workloads .* [0-9]+ crash states checked"
	assert_output --partial "0 violations in 0 workloads"
}

@test "sync mode leaves only leaks too" {
	crash --crash-check=sample:400 --mode sync --random 150 --seed 3 "$BASE"
	assert_success
	assert_output --regexp "400 crash states checked .* 0 violations"
}

@test "a random workload of 300 operations, every state: only leaks" {
	crash --crash-check --random 300 --seed 11 "$BASE"
	assert_success
	assert_output --regexp "[0-9]{3,} crash states checked .* 0 violations"
}

@test "a directory moved 40 times among three parents before any write-back: only leaks" {
	# each move's new name waits for the old names still pending (more
	# than one waiting set could hold), through the newest one
	{
		printf 'mkdir /r0\nmkdir /r1\nmkdir /r2\nmkdir /r0/D\ncreate /r0/D/f\n'
		for k in $(seq 0 39); do
			echo "rename /r$((k % 3))/D /r$(((k + 1) % 3))/D"
		done
		echo sync
	} >rot.replay
	crash --crash-check --jobs 1 "$BASE" rot.replay
	assert_success
	assert_output --regexp "[0-9]{3,} crash states checked .* 0 violations"
}

@test "a tree moved under a directory that was moved out of it, two levels down: no loop on disk" {
	# Y leaves D's tree, then D goes under Y's child N: D's new ".." waits
	# for Y's, else a crash can show D -> N -> Y -> Z -> D
	cat >loop.replay <<-'EOF'
	mkdir /D
	mkdir /D/Z
	mkdir /D/Z/Y
	mkdir /D/Z/Y/N
	sync
	rename /D/Z/Y /Y
	rename /D /Y/N/D
	sync
	EOF
	crash --crash-check --subsets 64 --jobs 1 "$BASE" loop.replay
	assert_success
	assert_output --regexp "[0-9]{2,} crash states checked .* 0 violations"
	refute_output --partial dir_loop
	# and random moves anywhere in a tree (tests/crash/moves: seed 35
	# looped before)
	"$SUFS_SRCDIR/tests/crash/moves" 35 >moves.replay
	crash --crash-check "$BASE" moves.replay
	assert_success
	assert_output --regexp "[0-9]{3,} crash states checked .* 0 violations"
}

@test "a directory renamed in its parent after a move, both pending: never three names" {
	# /e moves twice, then is renamed in place: the in-place rename writes
	# the last move's removal first (moved_settle()), as the ordered link
	# count once made it wait; with link counts as counters and no settle,
	# states of epoch 8 held three names (random workload 23, cut down)
	cat >three.replay <<-'EOF'
	mkdir /d/sub/d13 0746
	create /d/f26
	rename /d/hl /d/sub/d13/r35
	rename /e /d/sub/r38
	rename /d/sub/r38 /d/r43
	rename /d/r43 /d/r49
	EOF
	crash --crash-check "$BASE" three.replay
	assert_success
	assert_output --regexp "[0-9]{2,} crash states checked .* 0 violations"
	refute_output --partial entry_dir_link
}

@test "async mode: the harness reports damage worse than leaks" {
	crash --crash-check=sample:300 --mode async --random 200 --seed 1 "$BASE"
	assert_failure 64
	assert_output --regexp "[1-9][0-9]* violations"
	[[ $stderr == *"VIOLATION in --random 200 --seed 1, state "* ]]
	[[ $stderr == *"worse than a leak"* ]]
	[[ $stderr == *"findings of a full check:"* ]]
	[[ $stderr == *"reproduce: "* ]]
	# three reports in full, no more
	[ "$(grep -c VIOLATION <<<"$stderr")" = 3 ]
	ls crash-*.img >/dev/null
}

@test "the saved image and the reproduce command show the same violation" {
	crash --crash-check=sample:300 --mode async --random 200 --seed 1 --max-reports 1 "$BASE"
	assert_failure 64
	img=$(sed -n 's/^  image: //p' <<<"$stderr")
	cmd=$(sed -n 's/^  reproduce: //p' <<<"$stderr")
	[ -f "$img" ]
	run "$FSCK" -fn "$img"
	assert_failure 4
	state=$(sed -n 's/.*--crash-state \([^ ]*\) .*/\1/p' <<<"$cmd")
	crash --crash-state "$state" --mode async --random 200 --seed 1 "$BASE"
	assert_failure 64
	assert_output --regexp "^--random 200 --seed 1 \(async\)"
	assert_output --partial "1 crash states checked"
	[[ $stderr == *"state $state "* ]]
}

@test "breaking rule 1 (a name before its inode) is caught" {
	crash --crash-check=sample:300 --break-rule 1 --random 200 --seed 1 "$BASE"
	assert_failure 64
	[[ $stderr == *"worse than a leak"* ]]
}

@test "breaking rule 2 (a block reused before its old pointer is cleared) is caught" {
	crash --crash-check=sample:300 --break-rule 2 --random 200 --seed 1 "$BASE"
	assert_failure 64
}

@test "breaking rule 3 (rename drops the old name before the new is on disk) is caught" {
	crash --crash-check=sample:600 --break-rule 3 --random 200 --seed 2 "$BASE"
	assert_failure 64
}

@test "breaking rule 3 on a file made durable is caught by the oracle, though the inode it leaves unnamed is a leak to fsck" {
	printf '%s\n' "create /a" "write /a 0 5000 1" "mkdir /dd" "sync" "rename /a /dd/b" >"$T/w"
	crash --crash-check --break-rule 3 "$BASE" "$T/w"
	assert_failure 64
	[[ $stderr == *"('a' in directory inode 2), made durable, then renamed to 'b' in directory inode "*": no name it had since names it"* ]]
	assert_output --partial "unattached"
	crash --crash-check "$BASE" "$T/w"
	assert_success
	assert_output --regexp " 0 violations"
}

@test "the oracle: a file renamed again before a sync is named by one of its names" {
	printf '%s\n' "create /a" "write /a 0 5000 1" "mkdir /dd" "sync" "rename /a /dd/b" \
		"rename /dd/b /c" "rename /c /dd/e" >"$T/w"
	crash --crash-check "$BASE" "$T/w"
	assert_success
	assert_output --regexp " 0 violations"
	crash --crash-check --break-rule 3 "$BASE" "$T/w"
	assert_failure 64
}

@test "rmdir waits for every name renamed out of its directory, forty of them" {
	# on disk /n/x1../n/x40 are the files' only names; their new names in
	# eight directories wait for nothing of /n.  fsync / writes the removal
	# of n and what it waits for, nothing else: which must be all forty old
	# names' removals (with only the newest, or half of them, or none, this
	# finds files with no name on disk)
	{
		for i in $(seq 40); do echo "create /f$i"; done
		echo "mkdir /n"
		for j in $(seq 8); do echo "mkdir /m$j"; done
		echo "sync"
		for i in $(seq 40); do echo "rename /f$i /n/x$i"; done
		echo "sync"
		for i in $(seq 40); do echo "rename /n/x$i /m$((i % 8 + 1))/y$i"; done
		echo "rmdir /n"
		echo "fsync /"
	} >"$T/w"
	crash --crash-check "$BASE" "$T/w"
	assert_success
	assert_output --regexp " 0 violations"
}

@test "a rename into a new tree deeper than a set of waits writes nothing at once, and leaves only leaks" {
	# the old name's removal waits for the first name of each of the 40
	# new directories above the new name: 32 in its set, the rest in the
	# array beside it (they were once written at once, as fsync would)
	local p="" i
	{
		echo "create /qf"; echo "sync"
		for i in $(seq 40); do p="$p/q$i"; echo "mkdir $p"; done
		echo "stats"; echo "rename /qf $p/f"; echo "stats"
	} >"$T/w"
	mkimg "$T/deep.img" 8M
	run --separate-stderr "$DEBUG" -w -f "$T/w" "$T/deep.img"
	assert_success
	[ "$(grep -c '^Block writes: *4$' <<<"$output")" = 2 ]
	grep -v stats "$T/w" >"$T/w2"
	echo sync >>"$T/w2"
	crash --crash-check "$BASE" "$T/w2"
	assert_success
	assert_output --regexp " 0 violations"
}

@test "the oracle: what fsync made durable is checked in later states" {
	printf '%s\n' "create /new" "write /new 0 5000 9" "fsync /new" \
		"create /other" "write /other 0 100 1" >"$T/w"
	crash --crash-check "$BASE" "$T/w"
	assert_success
	assert_output --regexp "[1-9][0-9]* oracle records checked"
}

@test "on a terminal a bar shows the states checked, by one worker or by the parent of two" {
	for jobs in 1 2; do
		cp "$BASE" "$T/img$jobs"
		on_tty "$REPLAY" --crash-check=sample:300 --jobs "$jobs" --random 100 "$T/img$jobs"
		assert_success
		assert_line "Checking crash states: [########################################] 300/300"
		assert_line --regexp "^300 crash states checked .* 0 violations"
	done
}

@test "the image is never written" {
	before=$(sha "$BASE")
	crash --crash-check --random 50 --seed 5 "$BASE"
	assert_success
	[ "$(sha "$BASE")" = "$before" ]
}

@test "bad requests: unknown state, bad --crash-check, options that do not go together" {
	printf 'mkdir /x\n' >"$T/w"
	crash --crash-state 99:m0 "$BASE" "$T/w"
	assert_failure 4
	[[ $stderr == *"no state '99:m0'"* ]]
	crash --crash-check=some "$BASE" "$T/w"
	assert_failure 1
	[[ $stderr == *"invalid value for --crash-check"* ]]
	crash --crash-check --stats "$BASE" "$T/w"
	assert_failure 1
	crash --crash-check --crash-state final "$BASE" "$T/w"
	assert_failure 1
	crash --break-rule 5 --crash-check "$BASE" "$T/w"
	assert_failure 1
	crash --crash-check "$T/missing.img" "$T/w"
	assert_failure 2
	printf 'mkdir /x\nmkdir /x\n' >"$T/w2"
	crash --crash-check "$BASE" "$T/w2"
	assert_failure 4
	# a state's name not in form is a usage error, before anything runs
	for bad in bogus 1:x3 1:m 1 :m1; do
		crash --crash-state "$bad" "$BASE" "$T/w"
		assert_failure 1
		[[ $stderr == *"invalid value for --crash-state: '$bad'"* ]]
	done
	# a truncated or damaged image is refused as a run without the check
	# refuses it
	head -c 300000 "$BASE" >"$T/short.img"
	crash --crash-check "$T/short.img" "$T/w"
	assert_failure 2
	[[ $stderr == "sufs-replay: cannot open $T/short.img: image is shorter than its superblock says (truncated)" ]]
	cp "$BASE" "$T/bad.img"
	chmod u+w "$T/bad.img"
	python3 -c 'import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(1100); b = f.read(1); f.seek(1100); f.write(bytes([b[0] ^ 0xff]))' "$T/bad.img"
	crash --crash-check "$T/bad.img" "$T/w"
	assert_failure 2
	[[ $stderr == *"checksum"* ]]
}

@test "a workload script that cannot be read exits 8, its name shown escaped" {
	crash --crash-check "$BASE" "$T/no-such"$'\033'"x"
	assert_failure 8
	assert_output ""
	assert_equal "$stderr" "sufs-replay: cannot read $T/no-such\\x1bx: No such file or directory"
}

@test "a violation whose image cannot be saved says so; the reproduce command keeps --cache" {
	crash --crash-state 1:s6 --break-rule 1 --cache 64K --crash-dir "$T/missing" \
		--random 200 --seed 1 "$BASE"
	assert_failure 64
	assert_output --partial "1 crash states checked"
	[[ $stderr == *"VIOLATION in --random 200 --seed 1, state 1:s6 "* ]]
	grep -qx "  (the image could not be saved in $T/missing: No such file or directory)" <<<"$stderr"
	! grep -q '^  image: ' <<<"$stderr"
	cmd=$(sed -n 's/^  reproduce: //p' <<<"$stderr")
	assert_equal "$cmd" "SOURCE_DATE_EPOCH=1700000000 sufs-replay --crash-state 1:s6 --mode softdep --break-rule 1 --cache 65536 --random 200 --seed 1 $BASE"
	[ ! -e "$T/missing" ]
	# the command, run, finds the same violation
	crash ${cmd#*sufs-replay }
	assert_failure 64
	[[ $stderr == *"VIOLATION in --random 200 --seed 1, state 1:s6 "* ]]
	ls crash-*.img >/dev/null
}

@test "the reproduce command quotes an image name a shell would split, and runs as printed" {
	for name in "a b'c.img" $'tab\there.img'; do
		cp "$BASE" "$T/$name"
		crash --crash-state 4:s4 --break-rule 1 --random 200 --seed 1 "$T/$name"
		assert_failure 64
		cmd=$(sed -n 's/^  reproduce: //p' <<<"$stderr")
		# no control byte printed raw; the name quoted
		[[ $cmd != *$'\t'* ]]
		[[ $cmd == *" --seed 1 '"* || $cmd == *" --seed 1 \$'"* ]]
		rm -f crash-*.img
		run --separate-stderr env PATH="$(dirname "$REPLAY"):$PATH" bash -c "$cmd"
		assert_failure 64
		[[ $stderr == *"VIOLATION in --random 200 --seed 1, state 4:s4 "* ]]
		ls crash-*.img >/dev/null
	done
}

@test "--quiet prints nothing when nothing is violated, in JSON too; the JSON keys" {
	crash -q --crash-check=sample:5 --random 20 "$BASE"
	assert_success
	[ -z "$output" ]
	crash -q --json --crash-check=sample:5 --random 20 "$BASE"
	assert_success
	[ -z "$output" ]
	crash --json --crash-check=sample:5 --random 20 "$BASE"
	assert_success
	python3 - "$output" <<'EOF2'
import json, sys
d = json.loads(sys.argv[1])
keys = ("workload mode operations writes barriers epochs states checked leaky "
        "expectations violations bgfsck_refused found run_seconds check_seconds "
        "states_per_second").split()
assert sorted(d) == sorted(keys), sorted(d)
assert d["epochs"] == d["barriers"] + 1 and d["states"] == 5 == d["checked"], d
EOF2
	crash -q --json --crash-check=sample:20 --random 200 --seed 1 --mode async "$BASE"
	assert_failure 64
	[[ $output == *'"violations":'* ]]
}

@test "every kind of leak a crash may leave is found in some state, and the leak-only repair mends it" {
	crash --crash-check --json "$BASE" "$SUFS_SRCDIR/tests/crash/leaks.replay"
	assert_success
	python3 - "$output" <<'EOF2'
import json, sys
d = json.loads(sys.argv[1])
assert d["violations"] == 0 and d["checked"] == d["states"] > 0, d
want = ("blocks_leaked inodes_leaked links_high unattached unattached_empty "
        "dir_unref dir_unref_empty dir_stale_name block_past_size blocks_count "
        "group_counts sb_counts").split()
missing = [k for k in want if not d["found"].get(k)]
assert not missing, (missing, d["found"])
assert all(n <= d["leaky"] for n in d["found"].values()), d
EOF2
	# the same, as text: one line names them, each with its count of states
	crash --crash-check "$BASE" "$SUFS_SRCDIR/tests/crash/leaks.replay"
	assert_success
	assert_output --regexp "found \(in how many states\): .*dir_unref [0-9]+, "
}

@test "minimize cuts a breaking workload down to the lines that matter" {
	printf '%s\n' "create /a1" "write /a1 0 3000 1" "chmod 0600 /a1" "mkdir /x" \
		"utimes /a1 1 2" >"$T/w"
	run "$SUFS_SRCDIR/tests/crash/minimize" "$BASE" "$T/w" "worse than a leak" --mode async --jobs 1
	assert_success
	assert_output --regexp "lines left in .* \(was 5\)"
	[ "$(wc -l <"$T/w")" -lt 5 ]
	# what is left still breaks it
	crash --crash-check --mode async --jobs 1 "$BASE" "$T/w"
	assert_failure 64
	run "$SUFS_SRCDIR/tests/crash/minimize" "$BASE" "$T/w" "no such problem" --mode async
	assert_failure 1
}
