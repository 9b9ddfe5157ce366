#!/usr/bin/env bats
# Block devices: a loop device over a file stands in for a disk.  mkfs.sufs
# uses one whole (or the size asked, never more), zeroes what it held,
# refuses one that holds a file system or that another program holds
# exclusively; and every program works on it as on an image file.  Needs
# root and a free loop device; skipped without them.

bats_require_minimum_version 1.5.0
load helper

setup() {
	require_root
	require_cmd losetup
	truncate -s 64M "$T/disk"
	LOOP=$(losetup -f --show "$T/disk" 2>/dev/null) || skip "no loop device here"
	[ -b "$LOOP" ] || skip "no loop device here"
}

teardown() {
	[ -z "${HOLDER:-}" ] || kill "$HOLDER" 2>/dev/null || true
	[ -z "${LOOP:-}" ] || losetup -d "$LOOP" 2>/dev/null || true
}

@test "mkfs.sufs uses a block device whole and zeroes it; replay, fsck, dump, debug and snap work on it" {
	# what the disk held before: not a file system, just bytes
	head -c 64M /dev/urandom >"$LOOP"
	run --separate-stderr "$MKFS" -q "$LOOP"
	assert_success
	assert_equal "$("$DUMP" --json "$LOOP" | python3 -c 'import json,sys; print(json.load(sys.stdin)["superblock"]["blocks_count"])')" 16384
	# the last block is used by nothing: the old bytes are gone
	assert_equal "$(tail -c 4096 "$LOOP" | tr -d '\0' | wc -c)" 0
	printf 'mkdir /d\ncreate /d/f\nwrite /d/f 0 300K 5\nsymlink /d/f /l\n' |
		"$REPLAY" "$LOOP" -
	run "$FSCK" -fn "$LOOP"
	assert_success
	run "$DEBUG" -R "ls /d" "$LOOP"
	assert_success
	assert_output --partial "f"
	"$SNAP" create "$LOOP" s
	printf 'unlink /d/f\nsync\n' | "$REPLAY" "$LOOP" -
	"$SNAP" export "$LOOP" s "$T/then.img"
	run "$DEBUG" -R "stat /d/f" "$T/then.img"
	assert_success
	assert_output --partial "Size: 307200"
	"$SNAP" delete "$LOOP" s
	run "$FSCK" -fn "$LOOP"
	assert_success
}

@test "mkfs.sufs on a block device: a smaller size is kept, a larger one refused (exit 1)" {
	run --separate-stderr "$MKFS" -q "$LOOP" 32M
	assert_success
	assert_equal "$("$DUMP" --json "$LOOP" | python3 -c 'import json,sys; print(json.load(sys.stdin)["superblock"]["blocks_count"])')" 8192
	run "$FSCK" -fn "$LOOP"
	assert_success
	before=$(sha "$LOOP")
	run --separate-stderr "$MKFS" -q -f "$LOOP" 65M
	assert_failure 1
	assert_equal "$stderr" "mkfs.sufs: SIZE 68157440 is larger than the device $LOOP (67108864 bytes)"
	assert_equal "$(sha "$LOOP")" "$before"
}

@test "mkfs.sufs refuses a device that holds a file system without -f (exit 2), and writes nothing" {
	require_cmd mke2fs
	mke2fs -q -F -L old "$LOOP" >/dev/null 2>&1
	before=$(sha "$LOOP")
	run --separate-stderr "$MKFS" -q "$LOOP"
	assert_failure 2
	assert_equal "$stderr" "mkfs.sufs: $LOOP contains an ext2 file system (label \"old\"); use -f to overwrite"
	assert_equal "$(sha "$LOOP")" "$before"
	run --separate-stderr "$MKFS" -q -f "$LOOP"
	assert_success
	run "$FSCK" -fn "$LOOP"
	assert_success
}

@test "mkfs.sufs refuses a device another program holds exclusively (exit 2), and writes nothing" {
	"$MKFS" -q "$LOOP"
	before=$(sha "$LOOP")
	mkfifo "$T/held"
	python3 -c '
import os, signal, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL)
print("held", flush=True)
signal.pause()' "$LOOP" >"$T/held" &
	HOLDER=$!
	read -r line <"$T/held"
	assert_equal "$line" held
	run --separate-stderr "$MKFS" -q -f "$LOOP"
	assert_failure 2
	assert_equal "$stderr" "mkfs.sufs: cannot open $LOOP for writing: Device or resource busy"
	kill "$HOLDER"
	wait "$HOLDER" || true
	HOLDER=
	assert_equal "$(sha "$LOOP")" "$before"
	run "$FSCK" -fn "$LOOP"
	assert_success
}

# damage_magic DEV: zero the magic of the primary superblock
damage_magic() {
	printf '\0\0\0\0' | dd of="$1" bs=1 seek=1024 conv=notrunc status=none
}

@test "mkfs.sufs clears the backups of the file system it replaces: a check never takes an old one" {
	# the old file system's own geometry (from its primary), then the
	# default geometry of each block size (its primary lost first)
	for old in "-b 1024 -g 1024" "-b 2048"; do
		# shellcheck disable=SC2086  # the options' words
		"$MKFS" -q -f $old "$LOOP"
		run "$FSCK" -fn "$LOOP"
		assert_success
		[ "$old" = "-b 1024 -g 1024" ] || damage_magic "$LOOP"
		"$MKFS" -q -f -b 4096 "$LOOP"     # one group: no backups of its own
		damage_magic "$LOOP"
		run --separate-stderr "$FSCK" -fn "$LOOP"
		assert_failure 8
		assert_equal "$stderr" "fsck.sufs: $LOOP: not a sufs file system (bad magic number)"
	done
}
