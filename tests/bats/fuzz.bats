#!/usr/bin/env bats
# tests/fuzz: metacorrupt damages metadata and nothing else, reproducibly;
# e2fuzz tells a crash, a hang and an unclean repair apart; and a short
# e2fuzz run (20 iterations) finds nothing.  The long runs are `make
# fuzz-images` and `make fuzz` (doc/FUZZING.md), never make check.

load helper

bats_require_minimum_version 1.5.0

CORRUPT=$SUFS_BUILDDIR/tests/fuzz/metacorrupt
E2FUZZ=$SUFS_SRCDIR/tests/fuzz/e2fuzz

populated() { # populated IMG: a small image with files, a long directory, indirect blocks
	mkimg "$1" 1M -b 1024 -g 256 -N 96
	{
		echo "mkdir /d"
		for i in $(seq 1 40); do echo "create /d/a-long-enough-name-$i"; done
		echo "create /big"
		echo "write /big 0 40K 1"
		echo "symlink /$(printf 'y%.0s' {1..130}) /long"
	} | "$REPLAY" "$1" - >/dev/null
}

@test "metacorrupt changes only the metadata blocks it lists" {
	populated "$T/a.img"
	run "$CORRUPT" -l "$T/a.img"
	assert_success
	meta=" $(echo $output) "
	run "$CORRUPT" -v -n 200 -s 9 "$T/a.img" "$T/b.img"
	assert_success
	[ "${#lines[@]}" -eq 200 ]
	# every changed byte (cmp -l: 1-based offset) is in a listed block
	while read -r off _; do
		blk=$(((off - 1) / 1024))
		[[ $meta == *" $blk "* ]] || fail "byte $off (block $blk) is not metadata"
	done < <(cmp -l "$T/a.img" "$T/b.img")
	[ "$(cmp -l "$T/a.img" "$T/b.img" | wc -l)" -gt 0 ]
}

@test "metacorrupt: the same seed gives the same damage, another seed other damage" {
	populated "$T/a.img"
	"$CORRUPT" -n 32 -s 5 "$T/a.img" "$T/b.img"
	"$CORRUPT" -n 32 -s 5 "$T/a.img" "$T/c.img"
	"$CORRUPT" -n 32 -s 6 "$T/a.img" "$T/d.img"
	cmp "$T/b.img" "$T/c.img"
	run ! cmp -s "$T/b.img" "$T/d.img"
}

@test "metacorrupt refuses what is not a sufs image" {
	head -c 65536 /dev/zero >"$T/zero.img"
	run "$CORRUPT" -n 4 "$T/zero.img" "$T/out.img"
	assert_failure 2
	assert_output --partial "not a sufs file system"
}

# A build directory whose fsck.sufs is the given script (the real mkfs.sufs
# and metacorrupt beside it), to see how e2fuzz judges each outcome.
fake_fsck() {
	mkdir -p "$T/fake/fsck" "$T/fake/mkfs" "$T/fake/tests/fuzz"
	ln -s "$MKFS" "$T/fake/mkfs/mkfs.sufs"
	ln -s "$CORRUPT" "$T/fake/tests/fuzz/metacorrupt"
	printf '#!/bin/bash\n%s\n' "$1" >"$T/fake/fsck/fsck.sufs"
	chmod +x "$T/fake/fsck/fsck.sufs"
}

@test "e2fuzz counts a run killed by a signal, or a sanitizer report, as a crash" {
	populated "$T/a.img"
	fake_fsck 'case "$1" in -fn) exit 0;; esac; [ -e "$2.x" ] || { touch "$2.x"; kill -SEGV $$; }
echo "==1==ERROR: AddressSanitizer: heap-buffer-overflow"; exit 1'
	run "$E2FUZZ" -q -b "$T/fake" -n 2 -o "$T/kept" "$T/a.img"
	assert_failure 1
	assert_output --partial "2 iterations, 16 bytes each: 2 crashes, 0 hangs, 0 not clean"
	[ -f "$T/kept/2.img" ]
	[ -f "$T/kept/3.log" ]
}

@test "e2fuzz counts a run past the time limit as a hang" {
	populated "$T/a.img"
	fake_fsck 'case "$1" in -fn) exit 0;; esac; sleep 20'
	run "$E2FUZZ" -q -b "$T/fake" -n 1 -t 1 "$T/a.img"
	assert_failure 1
	assert_output --partial "1 iterations, 16 bytes each: 0 crashes, 1 hangs"
}

@test "e2fuzz counts a second run that still repairs as not clean" {
	populated "$T/a.img"
	fake_fsck 'case "$1" in -fn) exit 0;; esac; exit 1'
	run "$E2FUZZ" -q -b "$T/fake" -n 3 "$T/a.img"
	assert_failure 1
	assert_output --partial "0 crashes, 0 hangs, 3 not clean within 2 runs"
}

@test "e2fuzz: 20 iterations of 16 metadata bytes, each repaired by one fsck.sufs -fy" {
	run "$E2FUZZ" -q -b "$SUFS_BUILDDIR" -n 20 -k 16 -s 100
	assert_success
	assert_output --regexp "20 iterations, 16 bytes each: 0 crashes, 0 hangs, 0 not clean within 2 runs, 0 uncorrected, [0-9]+ repaired"
}
