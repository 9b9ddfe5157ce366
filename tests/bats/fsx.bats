#!/usr/bin/env bats
# fsx (tests/fsx/fsx.c) through a sufs-fuse mount: random reads, writes,
# mmap reads and writes, truncates, hole punches, allocations, fsyncs and
# seeks on one file, each checked against a model of the file in memory;
# then the file after an unmount and a remount (tests/fsx/run).  make
# fsx-check runs a million operations.  Needs root and /dev/fuse.  The
# image is in memory (/dev/shm) where there is room: an fsync (and each
# msync is one) costs a barrier of the host's disk otherwise, which
# doubled the time of these runs and tests nothing of fsx's.

bats_require_minimum_version 1.5.0
load helper

FSX=$SUFS_BUILDDIR/tests/fsx/fsx

setup() {
	[ -x "$FSX" ] || skip "tests/fsx/fsx is not built"
}

teardown() {
	fuse_cleanup "$T/mnt"
}

# fsx_run ARGS...: tests/fsx/run, its work directory in /dev/shm when it
# is writable and has 1 GiB free
fsx_run() {
	local tmp=${TMPDIR:-/tmp}
	if [ -d /dev/shm ] && [ -w /dev/shm ] &&
	   [ "$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')" -ge 1048576 ]; then
		tmp=/dev/shm
	fi
	run env TMPDIR="$tmp" "$SUFS_SRCDIR/tests/fsx/run" "$@"
}

@test "fsx: 100,000 operations on a file through the mount, reaching its double indirect tree, none differs" {
	require_fuse
	fsx_run -N 100000 -S 34 -l 4M -o 256K -c 2000
	assert_success
	assert_line --regexp '^fsx: 100000 operations, seed 34, no difference \(read [0-9]+, write [0-9]+, mapread [0-9]+, mapwrite [0-9]+, truncate [0-9]+, punch [0-9]+, falloc [0-9]+, fsync [0-9]+, reopen [0-9]+, seek [0-9]+\)$'
	assert_line --partial "holds the"
}

@test "fsx: 10,000 larger operations on a file of 1 KiB blocks, into its triple indirect tree, none differs" {
	require_fuse
	fsx_run -N 10000 -S 35 -b 1024 -l 20M -o 1M -c 2500
	assert_success
	assert_line --regexp '^fsx: 10000 operations, seed 35, no difference'
}

@test "fsx: 20,000 operations in sync mode, none differs" {
	require_fuse
	fsx_run -N 20000 -S 36 -l 1M --mode sync
	assert_success
	assert_line --regexp '^fsx: 20000 operations, seed 36, no difference'
}

@test "fsx notices bytes another writer changes behind its back, and says which operations came last" {
	# on the test's own directory: it is fsx's checking that is tested
	python3 - "$T/file" <<-'EOF' &
	import os, sys, time
	for _ in range(400):
	    time.sleep(0.005)
	    try:
	        fd = os.open(sys.argv[1], os.O_WRONLY)
	        os.pwrite(fd, b"\xee" * 4096, 8192)
	        os.close(fd)
	    except FileNotFoundError:
	        pass
	EOF
	run "$FSX" -N 100000 -S 3 -l 64K -o 16K -c 100 "$T/file"
	wait
	assert_failure 1
	assert_output --regexp 'fsx: operation [0-9]+: (size|whole file|read|mapread|SEEK)'
	assert_output --partial "the last operations"
	[ -f "$T/file.fsxgood" ]
}

@test "fsx --verify: a file that holds the model passes, one changed byte fails" {
	head -c 100000 /dev/urandom >"$T/model"
	cp "$T/model" "$T/file"
	run "$FSX" --verify "$T/model" "$T/file"
	assert_success
	printf 'x' | dd of="$T/file" bs=1 seek=54321 conv=notrunc status=none
	run "$FSX" --verify "$T/model" "$T/file"
	assert_failure 1
	assert_output --partial "whole file at 0xd431"
}
