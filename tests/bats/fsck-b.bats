#!/usr/bin/env bats
# fsck.sufs -b: the background check.  It frees on the live image the leaks
# it finds on a snapshot, refuses (status 64, image untouched) what was not
# written in softdep mode or is flagged as needing a full check, and flags
# the image when it finds anything worse than a leak.

load helper

bats_require_minimum_version 1.5.0

IMG=

setup() {
	IMG=$T/disk.img
}

# A crash image in softdep mode: a random workload stopped after 20
# barriers.  The full check must find leaks there and nothing else, or the
# tests below would prove nothing.
crashimg() {
	mkimg "$IMG"
	run "$REPLAY" --random 300 --seed 1 --crash-after-epoch 20 "$IMG"
	assert_failure 32
	run "$FSCK" -fn --json "$IMG"
	assert_failure 4
	python3 -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["counts"]["leaks"] > 0 and r["counts"]["other"] == 0, r["counts"]
' "$output"
}

# Three files in a directory, written in softdep mode and closed.
popimg() {
	mkimg "$IMG"
	"$DEBUG" -w -f - "$IMG" <<-'EOF'
	mkdir /d
	create /d/f
	write /d/f 0 10000 1
	create /d/g
	EOF
}

# The names of the problems a full check -n finds, one a line.
problem_names() {
	"$FSCK" -fn --json "$IMG" |
		python3 -c 'import json, sys; [print(p["name"]) for p in json.load(sys.stdin)["problems"]]'
}

@test "-b frees the leaks a crash left, and a full check then finds none" {
	crashimg
	run "$FSCK" -b "$IMG"
	assert_failure 1
	assert_output --partial "marked in use but used by nothing."
	assert_output --partial "***** FILE SYSTEM WAS MODIFIED *****"
	run "$FSCK" -fn "$IMG"
	assert_success
	run "$DUMP" "$IMG"
	assert_line --regexp '^Filesystem state: +clean$'
	assert_line --regexp '^Filesystem flags: +\(none\)$'
	assert_line --regexp '^Last check result: +1$'
	assert_line --regexp '^Snapshots: +\(none\)$'
}

@test "-b mends every kind of leak a crash may leave, in every crash state" {
	# (the states of leaks.replay hold each kind: crash.bats checks that)
	mkimg "$IMG" 4M -b 1024
	"$REPLAY" "$IMG" "$SUFS_SRCDIR/tests/crash/tree.replay"
	run --separate-stderr "$REPLAY" --crash-check --bgfsck --json "$IMG" \
		"$SUFS_SRCDIR/tests/crash/leaks.replay"
	assert_success
	python3 - "$output" <<'EOF2'
import json, sys
d = json.loads(sys.argv[1])
assert d["violations"] == 0 and d["bgfsck_refused"] == 0 and d["checked"] > 0, d
for k in "dir_unref dir_unref_empty dir_stale_name block_past_size".split():
    assert d["found"].get(k), (k, d["found"])
EOF2
}

@test "-b on the repaired image finds nothing and exits 0" {
	crashimg
	run "$FSCK" -b "$IMG"
	assert_failure 1
	run "$FSCK" -b "$IMG"
	assert_success
	refute_output --partial "MODIFIED"
}

@test "-b -p repairs the leaks silently" {
	crashimg
	run "$FSCK" -b -p "$IMG"
	assert_failure 1
	assert_output --regexp "^$IMG: [0-9]+/[0-9]+ files, [0-9]+/[0-9]+ blocks\$"
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "-b on a clean image exits 0 and leaves it clean" {
	popimg
	run "$FSCK" -b "$IMG"
	assert_success
	refute_output --partial "MODIFIED"
	assert_line "Pass 5: bitmaps and summaries"
	run "$FSCK" -fn "$IMG"
	assert_success
	run "$DEBUG" -R "cat /d/f" "$IMG"
	assert_success
}

@test "-b -n applies nothing: a full check finds the same leaks afterwards" {
	crashimg
	before=$(problem_names)
	run "$FSCK" -b -n "$IMG"
	assert_failure 4
	assert_output --partial "WARNING: file system still has errors"
	refute_output --partial "MODIFIED"
	run problem_names
	assert_output "$before"
	run "$DUMP" "$IMG"
	assert_line --regexp '^Snapshots: +\(none\)$'
}

@test "an image last written in async mode is refused, with status 64, and left as it was" {
	mkimg "$IMG"
	run "$REPLAY" --mode async --random 300 --seed 1 --crash-after-write 100 "$IMG"
	assert_failure 32
	sum=$(sha "$IMG")
	run --separate-stderr "$FSCK" -b "$IMG"
	assert_failure 64
	assert_output ""
	[[ $stderr == *"$IMG: cannot check in the background: it was last written in async mode"* ]]
	[[ $stderr == *"run a full check: fsck.sufs -f $IMG"* ]]
	[ "$(sha "$IMG")" = "$sum" ]
}

@test "an image last written in sync mode is refused too, and left as it was" {
	mkimg "$IMG"
	run "$REPLAY" --mode sync --random 100 --seed 2 "$IMG"
	assert_success
	sum=$(sha "$IMG")
	run "$FSCK" -b -y "$IMG"
	assert_failure 64
	assert_output --partial "last written in sync mode"
	[ "$(sha "$IMG")" = "$sum" ]
	# a full check is what it asks for, and that one runs
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "worse than a leak: -b exits 4, changes nothing else, flags the image, then refuses it" {
	popimg
	"$DEBUG" -w -R "sif /d/f mode 0170644" "$IMG"
	before=$(problem_names)
	run "$FSCK" -b "$IMG"
	assert_failure 4
	assert_output --partial "Inode 4 has an invalid file type (mode 0170644)."
	assert_output --partial "problems worse than leaks found: nothing was changed."
	assert_output --partial "flagged as needing a full check"
	run "$DUMP" "$IMG"
	assert_line --regexp '^Filesystem flags: +needs_fsck$'
	assert_line --regexp '^Last check result: +4$'
	run problem_names
	assert_output "$before"

	sum=$(sha "$IMG")
	run "$FSCK" -b "$IMG"
	assert_failure 64
	assert_output --partial "it is flagged as needing a full check"
	[ "$(sha "$IMG")" = "$sum" ]

	# a full check repairs it and clears the flag: -b runs again
	run "$FSCK" -fy "$IMG"
	assert_failure 1
	run "$FSCK" -b "$IMG"
	assert_success
}

@test "-b -p prints only what is worse than a leak, each after the image's name; -v the leaks too" {
	popimg
	"$DEBUG" -w -R "sif /d/f mode 0170644" "$IMG"
	"$DEBUG" -w -R "sif /d/g links 3" "$IMG"
	cp "$IMG" "$T/v.img"
	run --separate-stderr "$FSCK" -b -p "$IMG"
	assert_failure 4
	assert_output "$IMG: Inode 4 has an invalid file type (mode 0170644).
$IMG: Entry 'f' in directory inode 3 names free inode 4.

$IMG: UNEXPECTED INCONSISTENCY; RUN fsck.sufs MANUALLY.
	(i.e., without -a or -p options)
$IMG: the file system is flagged as needing a full check."
	run "$DUMP" "$IMG"
	assert_line --regexp '^Filesystem flags: +needs_fsck$'
	run --separate-stderr "$FSCK" -b -pv "$T/v.img"
	assert_failure 4
	assert_line "$T/v.img: Inode 5 link count is 3, should be 1."
	assert_line "$T/v.img: Inode 4 has an invalid file type (mode 0170644)."
	assert_line "$T/v.img: UNEXPECTED INCONSISTENCY; RUN fsck.sufs MANUALLY."
}

@test "a snapshot file whose block map points out of range: -b exits 4, frees nothing, flags the image" {
	mkimg "$IMG"
	printf 'mkdir /d\ncreate /d/f\nwrite /d/f 0 100K 1\n' | "$REPLAY" "$IMG" -
	"$SNAP" create "$IMG" s
	# the snapshot takes the blocks of the removed file: its indirect block
	# maps them (a snapshot file's logical block is the block's number)
	printf 'unlink /d/f\nsync\n' | "$REPLAY" "$IMG" -
	ino=$("$SNAP" info --json "$IMG" s | python3 -c 'import json, sys; print(json.load(sys.stdin)["inode"])')
	"$DEBUG" -w -R "sif <$ino> block[IND] 99999999" "$IMG"
	before=$(problem_names)
	run --separate-stderr "$FSCK" -b "$IMG"
	assert_failure 4
	assert_line "Inode $ino block #12 points to 99999999, outside the data area."
	assert_line --partial "problems worse than leaks found: nothing was changed."
	refute_output --partial "marked in use but used by nothing"
	run "$DUMP" "$IMG"
	assert_line --regexp '^Filesystem flags: +needs_fsck$'
	run problem_names
	assert_output "$before"
	# nor does sufs-snap take a snapshot that would leave those blocks out
	run --separate-stderr "$SNAP" create "$IMG" t
	assert_failure 4
	assert_equal "$stderr" "sufs-snap: $IMG: creating snapshot \"t\": corrupt metadata; fsck.sufs -f repairs it"
}

@test "a snapshot slot naming a directory, no inode or a damaged inode: -b says which, exits 4, flags the image" {
	local edit line
	mkimg "$IMG" 4M
	printf 'mkdir /d\ncreate /d/f\nwrite /d/f 0 10000 1\n' | "$REPLAY" "$IMG" -
	"$SNAP" create "$IMG" s
	cp "$IMG" "$T/orig.img"
	while IFS='|' read -r edit line; do
		cp "$T/orig.img" "$IMG"
		"$DEBUG" -w -R "$edit" "$IMG"
		run --separate-stderr "$FSCK" -b "$IMG"
		assert_failure 4
		assert_line --index 0 "$line"
		assert_line "$IMG: problems worse than leaks found: nothing was changed."
		run "$DUMP" "$IMG"
		assert_line --regexp '^Filesystem flags: +needs_fsck$'
	done <<-'EOF'
	set_super_value snap[0].ino 2|Snapshot slot 0 names inode 2, which is not a snapshot file (not a regular file).
	set_super_value snap[0].ino 99999|Snapshot slot 0 names inode 99999, which is not a snapshot file (no such inode).
	sif /.snap/s checksum 5|Inode 6 checksum does not match its contents.
	EOF
}

@test "an image flagged by sufs-debug as needing a full check is refused" {
	popimg
	"$DEBUG" -w -R "set_super_value flags 1" "$IMG"
	sum=$(sha "$IMG")
	run "$FSCK" -b -p "$IMG"
	assert_failure 64
	assert_output --partial "flagged as needing a full check"
	[ "$(sha "$IMG")" = "$sum" ]
}

@test "--json: the report parses and says what -b did" {
	crashimg
	run --separate-stderr "$FSCK" -b -n --json "$IMG"
	assert_failure 4
	python3 -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["background"] is True and r["status"] == 4 and not r["modified"], r
assert r["problems"] and all(p["leak"] and not p["fixed"] for p in r["problems"]), r
assert [p["pass"] for p in r["passes"]] == [0, 1, 2, 3, 4, 5], r["passes"]
' "$output"
	run --separate-stderr "$FSCK" -b --json "$IMG"
	assert_failure 1
	python3 -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["status"] == 1 and r["modified"] and r["error"] is None, r
assert all(p["fixed"] for p in r["problems"]), r
assert r["counts"]["fixed"] > 0, r["counts"]
' "$output"
	mkimg "$IMG"
	"$REPLAY" --mode async --random 10 "$IMG"
	run --separate-stderr "$FSCK" -b --json "$IMG"
	assert_failure 64
	python3 -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["status"] == 64 and "async mode" in r["error"], r
' "$output"
}

@test "--throttle slows the check down and it still repairs" {
	crashimg
	start=$(date +%s%N)
	run "$FSCK" -b --throttle 400 "$IMG"
	end=$(date +%s%N)
	assert_failure 1
	# the check reads well over 100 KiB of the snapshot
	[ $(((end - start) / 1000000)) -ge 250 ]
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "an interrupt stops a slowly throttled check at once, and the snapshot goes" {
	crashimg
	"$FSCK" -b --throttle 1 "$IMG" >"$T/out" &
	local pid=$! start rc=0 i
	# until the snapshot is there, the check has not begun
	for i in $(seq 600); do
		"$SNAP" list "$IMG" | grep -q . && break
		sleep 0.1
	done
	sleep 0.5
	start=$(date +%s)
	kill -INT "$pid"
	wait "$pid" || rc=$? # (not `run wait`: a subshell has no child to wait for)
	(( rc & 32 )) # cancelled (4 too, for the leaks found and not freed)
	# at 1 KiB/s the rest of the check would take minutes
	[ $(($(date +%s) - start)) -lt 20 ]
	grep -q "interrupted; the check did not finish" "$T/out"
	run "$SNAP" list "$IMG"
	assert_success
	assert_output ""
}

@test "-C FD writes progress lines during -b" {
	crashimg
	run "$FSCK" -b -C 3 "$IMG" 3>"$T/progress"
	assert_failure 1
	grep -q "^1 1024 1024 $IMG\$" "$T/progress"
	grep -q "^5 " "$T/progress"
}

@test "fsck -t sufs -b passes -b on to fsck.sufs" {
	require_cmd fsck
	crashimg
	PATH=$SUFS_BUILDDIR/fsck:$PATH run fsck -t sufs -b "$IMG"
	assert_failure 1
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "-b on a missing image or one that is not sufs: status 8" {
	run "$FSCK" -b "$T/missing.img"
	assert_failure 8
	head -c 1M /dev/zero >"$T/zero.img"
	run "$FSCK" -b "$T/zero.img"
	assert_failure 8
	assert_output --partial "zero.img"
}

@test "-b on a full file system or with every snapshot slot taken: status 8, and the message says why" {
	mkimg "$IMG"
	printf 'create /f\n!ENOSPC write /f 0 20M 1\n' | "$REPLAY" "$IMG" -
	run --separate-stderr "$FSCK" -b "$IMG"
	assert_failure 8
	assert_equal "$stderr" "fsck.sufs: $IMG: No space left on device (taking the snapshot to check)"
	mkimg "$IMG"
	for i in $(seq 20); do "$SNAP" create "$IMG" "s$i"; done
	run --separate-stderr "$FSCK" -b "$IMG"
	assert_failure 8
	assert_equal "$stderr" "fsck.sufs: $IMG: all snapshot slots are taken (taking the snapshot to check)"
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "-b usage errors exit 16" {
	run "$FSCK" -b -L "$T/x"
	assert_failure 16
	run "$FSCK" -b -s 32768 "$T/x"
	assert_failure 16
	run "$FSCK" --throttle 100 "$T/x"
	assert_failure 16
	run "$FSCK" -b --throttle fast "$T/x"
	assert_failure 16
	run "$FSCK" -b -n -y "$T/x"
	assert_failure 16
	run "$FSCK" -b
	assert_failure 16
}
