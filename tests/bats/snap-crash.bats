#!/usr/bin/env bats
# Snapshots and the background check under the crash harness: with a
# snapshot taken before or during a workload, every crash state still has
# only leaks and every snapshot's view checks clean and shows the tree it
# was taken of; the background check (fsck.sufs -b) leaves every softdep
# crash state clean and refuses the others; the control (the copy of a
# block not waited for) is caught.  sufs-replay --bgfsck runs a background
# check beside a workload of 10,000 operations.

bats_require_minimum_version 1.5.0
load helper

setup() {
	export SOURCE_DATE_EPOCH=1700000000
	BASE=$T/base.img
	"$MKFS" -q -b 1024 "$BASE" 4M
	"$REPLAY" "$BASE" "$SUFS_SRCDIR/tests/crash/tree.replay"
	chmod a-w "$BASE"
	cd "$T"
	cat >w.replay <<'SCRIPT'
create /s1
write /s1 0 40K 1
mkdir /sd
mkdir /other
create /sd/f
write /sd/f 0 20K 2
sync
snapshot one
write /s1 0 40K 3
unlink /sd/f
truncate /s1 1000
create /sd/g
write /sd/g 0 30K 4
snapshot two
rename /sd /sd2
write /s1 0 10K 5
rename /sd2 /other/sd3
snapdelete one
unlink /s1
SCRIPT
}

crash() {
	run --separate-stderr "$REPLAY" "$@"
}

@test "snapshots taken during a workload: only leaks, and every view is its moment" {
	crash --crash-check "$BASE" w.replay
	assert_success
	assert_output --regexp "[0-9]{3,} crash states checked .* 0 violations"
}

@test "in sync mode too" {
	crash --crash-check --mode sync "$BASE" w.replay
	assert_success
	assert_output --regexp " 0 violations"
}

@test "a snapshot that runs out of room is marked broken before the change it missed is on disk" {
	cp "$BASE" full.img
	chmod u+w full.img
	echo "snapshot base" | "$REPLAY" full.img -
	# /big fills the file system; /c's inode block then finds no room for
	# the snapshot's copy, and the snapshot breaks
	cat >enospc.replay <<'SCRIPT'
create /big
!ENOSPC write /big 0 8M 7
create /c
!ENOSPC write /c 0 1M 8
unlink /big
write /c 0 100K 9
fsync /c
sync
SCRIPT
	crash --crash-check --bgfsck full.img enospc.replay
	assert_success
	assert_output --regexp "[0-9]{3} crash states checked .* 0 violations"
	cp full.img after.img
	"$REPLAY" after.img enospc.replay
	run "$SUFS_BUILDDIR/snapshot/sufs-snap" list after.img
	assert_line --regexp '^base .* broken$'
}

@test "the control: a copy not waited for is caught" {
	crash --crash-check --break-rule 4 --max-reports 1 "$BASE" w.replay
	assert_failure 64
	[[ $stderr == *"VIOLATION"* ]]
}

@test "a snapshot before a random workload, one in its middle: only leaks" {
	cp "$BASE" b.img
	chmod u+w b.img
	echo "snapshot before" | "$REPLAY" b.img -
	"$REPLAY" --print-script --random 200 --seed 4 b.img >r.replay
	awk 'NR == 100 { print "snapshot middle" } { print }' r.replay >r2.replay
	crash --crash-check=sample:600 b.img r2.replay
	assert_success
	assert_output --regexp "600 crash states checked .* 0 violations"
}

@test "the background check leaves every softdep crash state clean" {
	crash --crash-check --bgfsck "$BASE" w.replay
	assert_success
	assert_output --regexp "([0-9]+) crash states checked .* 0 violations"
	assert_output --regexp "background check: run on [0-9]{3,} states, refused on 0"
}

@test "the background check on a random workload's crash states" {
	crash --crash-check=sample:500 --bgfsck --random 300 --seed 2 "$BASE"
	assert_success
	assert_output --partial "refused on 0"
	assert_output --regexp " 0 violations"
}

@test "the background check refuses every state of an async or sync run" {
	for mode in async sync; do
		crash --crash-check=sample:200 --bgfsck --mode $mode --json --max-reports 0 "$BASE" w.replay
		# async states may be worse than leaks (exit 16); none may be
		# checked in the background
		n=$(sed -n 's/.*"checked":\([0-9]*\).*/\1/p' <<<"$output")
		refused=$(sed -n 's/.*"bgfsck_refused":\([0-9]*\).*/\1/p' <<<"$output")
		[ "$n" -gt 0 ]
		# (the states before the mode reached the superblock were
		# written in softdep mode: checked; any other run would be a
		# violation, "ran on an image written in ...".  In async mode
		# they are about half: each subset of an epoch's writes before
		# the superblock's is one, and the clean blocks that fill the
		# gaps of its runs add to them)
		[ "$refused" -gt $((n / 3)) ]
		[ "$(grep -c "ran on an image written in" <<<"$stderr")" -eq 0 ]
		if [ $mode = sync ]; then
			[ "$status" = 0 ]
		fi
	done
}

@test "sufs-replay --bgfsck: 10,000 operations beside a background check, then clean" {
	mkimg live.img 64M
	"$REPLAY" --random 2000 --seed 3 --crash-after-epoch 40 live.img >/dev/null 2>&1 || true
	run "$FSCK" -f -n live.img
	assert_failure 4   # leaks the crash left
	run "$REPLAY" --bgfsck --throttle 4096 --stats --json --random 10000 --seed 5 live.img
	assert_success
	assert_output --regexp '"bgfsck": \{"status": 1, "problems": [1-9]'
	run "$FSCK" -f -n live.img
	assert_success
}

@test "--bgfsck and --throttle: usage errors" {
	run "$REPLAY" --throttle 10 --random 10 "$BASE"
	assert_failure 1
	assert_output --partial "--throttle goes with --bgfsck"
	run "$REPLAY" --bgfsck --throttle 0 --random 10 "$BASE"
	assert_failure 1
	run "$REPLAY" --crash-check --bgfsck --throttle 10 --random 10 "$BASE"
	assert_failure 1
	assert_output --partial "--throttle goes with a workload run whole"
	for mode in sync async; do
		run --separate-stderr "$REPLAY" --bgfsck --mode $mode --random 10 "$BASE"
		assert_failure 1
		assert_output ""
		[[ $stderr == "sufs-replay: --bgfsck goes with --mode softdep: the background check refuses an image written in another mode"* ]]
	done
}

@test "a missing snapshot and a full table are errors a script can expect" {
	cp "$BASE" s.img
	chmod u+w s.img
	{
		for i in $(seq 1 20); do echo "snapshot s$i"; done
		echo "!ENOSLOT snapshot s21"
		echo "!ENOTSNAP snapdelete nope"
		echo "snapdelete s1"
		echo "snapshot s21"
	} >full.replay
	run "$REPLAY" s.img full.replay
	assert_success
	run "$REPLAY" s.img - <<<"snapdelete nope"
	assert_failure 4
	assert_output --partial "(ENOTSNAP)"
}
