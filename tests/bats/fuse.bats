#!/usr/bin/env bats
# sufs-fuse: real programs on a mounted image.  Each test mounts an image
# with sufs-fuse in the foreground (a job of the test, so that its exit
# status after the unmount is known), runs programs on it, unmounts, and
# checks what the image holds afterwards with fsck.sufs.  Every test
# cleans up its mount, failed or not (teardown).  Needs root and
# /dev/fuse: skipped otherwise.

bats_require_minimum_version 1.5.0
load helper

setup() {
	require_fuse
	IMG=$T/fs.img
	MNT=$T/mnt
	mkdir -p "$MNT"
}

teardown() {
	fuse_cleanup "$MNT" "$T/mnt2" "$T/run/mnt"
	[ -z "${OPEN:-}" ] || rm -rf "$OPEN"
}

# mnt [IMG] [ARG...]: mount (IMG defaults to $IMG) with allow_other, as
# pjdfstest and other users' programs need.
mnt() {
	local img=$IMG
	if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
		img=$1
		shift
	fi
	fuse_mount "$img" "$MNT" -o allow_other "$@" || fail "mount failed ($status): $output"
}

# umnt: unmount; the daemon must exit 0 and the image check clean.
umnt() {
	fuse_unmount "$MNT" || fail "sufs-fuse exited $?: $(cat "$T/fuse.log")"
	run "$FSCK" -fn "${1:-$IMG}"
	[ "$status" -eq 0 ] || fail "fsck.sufs -fn after unmount: $output"
}

# make_tree DIR FILES SEED: a realistic tree (shared/tools/mktree).
make_tree() {
	require_mktree
	"$MKTREE" --files "$2" --seed "$3" "$1" >/dev/null
}

@test "a file written through the mount is in the image after fusermount3 -u, which leaves it clean" {
	mkimg "$IMG" 64M
	mnt
	echo hello >"$MNT/greeting"
	mkdir "$MNT/dir"
	umnt
	run "$DEBUG" -R "cat /greeting" "$IMG"
	assert_output hello
	run "$DUMP" -h "$IMG"
	assert_line --regexp '^Filesystem state: +clean$'
	run grep -c . "$T/fuse.log"
	assert_output 0
}

@test "tar -x of a tree through the mount reads back the same, before and after a remount" {
	make_tree "$T/src" 1500 3
	mkimg "$IMG" 256M
	tar -C "$T/src" -cf "$T/src.tar" .
	mnt
	tar -C "$MNT" -xf "$T/src.tar"
	diff -r "$T/src" "$MNT"
	umnt
	mnt
	diff -r "$T/src" "$MNT"
	umnt
}

# listing DIR: every name with its type, mode, owner, size, times, links
# and target, for comparing trees whole.
listing() {
	(cd "$1" && find . -printf '%p %y %m %U %G %s %T@ %n %l\n' | sort)
}

@test "cp -a keeps types, modes, owners, times, hard links, symlinks and holes" {
	local s=$T/src
	mkdir -p "$s/d/e" "$s/sticky"
	echo one >"$s/d/one"
	head -c 300000 /dev/urandom >"$s/d/e/big"
	ln "$s/d/one" "$s/d/e/one-again"
	ln -s ../one "$s/d/e/short-link"
	ln -s "$(printf 'x%.0s' $(seq 300))" "$s/long-link"
	mkfifo "$s/fifo"
	truncate -s 50M "$s/sparse"
	printf 'end' | dd of="$s/sparse" bs=1 seek=30000000 conv=notrunc status=none
	chown -R 1234:5678 "$s/d"
	chmod 4755 "$s/d/one"
	chmod 1777 "$s/sticky"
	chmod 2750 "$s/d/e"
	touch -h -d '2001-02-03 04:05:06.789' "$s/d/e/short-link" "$s/fifo" "$s/d/e/big"
	mkimg "$IMG" 128M
	mnt
	cp -a "$s" "$MNT/copy"
	assert_equal "$(listing "$MNT/copy")" "$(listing "$s")"
	(cd "$s" && find . -type f -exec cmp {} "$MNT/copy/{}" \;)
	# the holes stay holes: 50M of file, a block or two of data
	[ "$(stat -c %b "$MNT/copy/sparse")" -lt 100 ]
	umnt
	mnt
	assert_equal "$(listing "$MNT/copy")" "$(listing "$s")"
	umnt
}

@test "rm -rf of a tree gives back every block and inode it took" {
	make_tree "$T/src" 800 4
	mkimg "$IMG" 128M
	free_before=$("$DUMP" -h "$IMG" | grep -E '^Free (blocks|inodes):')
	mnt
	cp -a "$T/src" "$MNT/tree"
	rm -rf "$MNT/tree"
	run ls -A "$MNT"
	assert_output ""
	umnt
	assert_equal "$("$DUMP" -h "$IMG" | grep -E '^Free (blocks|inodes):')" "$free_before"
}

@test "hard links: one inode, its link count, its data through every name" {
	mkimg "$IMG" 32M
	mnt
	echo data >"$MNT/a"
	mkdir "$MNT/d"
	ln "$MNT/a" "$MNT/d/b"
	ln "$MNT/d/b" "$MNT/c"
	assert_equal "$(stat -c '%i %h' "$MNT/a")" "$(stat -c '%i %h' "$MNT/d/b")"
	assert_equal "$(stat -c %h "$MNT/c")" 3
	echo more >>"$MNT/c"
	run cat "$MNT/d/b"
	assert_output $'data\nmore'
	rm "$MNT/a"
	assert_equal "$(stat -c %h "$MNT/c")" 2
	run ln "$MNT/d" "$MNT/dirlink"
	assert_failure
	assert_output --partial "not allowed"
	umnt
	run "$DEBUG" -R "stat /c" "$IMG"
	assert_line --partial "Links: 2"
}

@test "symlinks: short and long targets, dangling ones, readlink and paths through them" {
	mkimg "$IMG" 32M
	long=$(printf 'd/%.0s' $(seq 150))target
	mnt
	mkdir -p "$MNT/real/sub"
	echo inside >"$MNT/real/sub/f"
	ln -s real "$MNT/short"
	ln -s "$long" "$MNT/long"
	ln -s /nowhere/at/all "$MNT/dangling"
	assert_equal "$(readlink "$MNT/short")" real
	assert_equal "$(readlink "$MNT/long")" "$long"
	assert_equal "$(stat -c %s "$MNT/long")" "${#long}"
	assert_equal "$(cat "$MNT/short/sub/f")" inside
	run cat "$MNT/dangling"
	assert_failure
	umnt
	mnt
	assert_equal "$(readlink "$MNT/long")" "$long"
	umnt
}

@test "sparse files: holes read as zeros, take no blocks, and SEEK_DATA and SEEK_HOLE find them" {
	mkimg "$IMG" 64M
	mnt
	run python3 - "$MNT/sparse" <<-'EOF'
	import os, sys
	fd = os.open(sys.argv[1], os.O_CREAT | os.O_RDWR, 0o644)
	os.pwrite(fd, b"A" * 4096, 1 << 20)          # a block at 1 MiB
	os.pwrite(fd, b"B" * 10, (8 << 20) + 100)      # and bytes at 8 MiB
	os.ftruncate(fd, 16 << 20)                     # a hole to the end
	st = os.fstat(fd)
	assert st.st_size == 16 << 20, st.st_size
	assert st.st_blocks * 512 < 64 << 10, st.st_blocks
	assert os.pread(fd, 4096, 0) == bytes(4096)
	assert os.pread(fd, 4096, 1 << 20) == b"A" * 4096
	assert os.pread(fd, 110, 8 << 20) == bytes(100) + b"B" * 10
	assert os.lseek(fd, 0, os.SEEK_DATA) == 1 << 20
	assert os.lseek(fd, 1 << 20, os.SEEK_HOLE) == (1 << 20) + 4096
	assert os.lseek(fd, (1 << 20) + 4096, os.SEEK_DATA) == 8 << 20
	assert os.lseek(fd, 0, os.SEEK_HOLE) == 0
	assert os.lseek(fd, (8 << 20) + 5, os.SEEK_DATA) == (8 << 20) + 5
	assert os.lseek(fd, 9 << 20, os.SEEK_HOLE) == 9 << 20
	try:
	    os.lseek(fd, 9 << 20, os.SEEK_DATA)
	    sys.exit("SEEK_DATA found data in the last hole")
	except OSError as e:
	    assert e.errno == 6, e                     # ENXIO
	print("ok")
	EOF
	assert_output ok
	umnt
}

@test "a file through triple indirect blocks reads back, before and after a remount" {
	# 1 KiB blocks: the triple indirect tree starts at 12 + 128 + 128^2
	# blocks, 16,524 KiB into a file
	mkimg "$IMG" 64M -b 1024
	head -c $((20 << 20)) /dev/urandom >"$T/big"
	mnt
	cp "$T/big" "$MNT/big"
	cmp "$T/big" "$MNT/big"
	umnt
	run "$DEBUG" -R "bmap /big 20000" "$IMG"
	assert_success
	refute_output --regexp '(^| )0$'
	mnt
	cmp "$T/big" "$MNT/big"
	rm "$MNT/big"
	umnt
}

@test "fallocate: plain allocation reads zeros and keeps data, a punched hole reads zeros and frees its blocks" {
	mkimg "$IMG" 64M
	head -c $((2 << 20)) /dev/urandom >"$T/data"
	mnt
	cp "$T/data" "$MNT/f"
	fallocate -o $((3 << 20)) -l $((1 << 20)) "$MNT/f"
	assert_equal "$(stat -c %s "$MNT/f")" $((4 << 20))
	cmp -n $((2 << 20)) "$T/data" "$MNT/f"
	cmp -n $((2 << 20)) -i $((2 << 20)):0 "$MNT/f" /dev/zero
	# a hole in the direct blocks, before the indirect tree: its two
	# blocks go (and nothing of the tree), and lseek finds the hole
	blocks=$(stat -c %b "$MNT/f")
	fallocate -p -o 4096 -l 8192 "$MNT/f"
	assert_equal "$(stat -c %b "$MNT/f")" $((blocks - 16))
	run python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY)
print(os.lseek(fd, 0, os.SEEK_HOLE), os.lseek(fd, 4096, os.SEEK_DATA))' "$MNT/f"
	assert_output "4096 12288"
	# holes in the direct blocks, in the indirect tree, and across
	for range in 4096:8192 100000:300000 1048576:65536 40000:20000; do
		fallocate -p -o "${range%:*}" -l "${range#*:}" "$MNT/f"
		dd if=/dev/zero of="$T/data" bs=1 seek="${range%:*}" count="${range#*:}" \
			conv=notrunc status=none
	done
	cmp -n $((2 << 20)) "$T/data" "$MNT/f"
	run fallocate -z -o 0 -l 4096 "$MNT/f"
	assert_failure
	umnt
	mnt
	cmp -n $((2 << 20)) "$T/data" "$MNT/f"
	umnt
}

@test "rename: every case gives Linux's answer and the right link counts" {
	mkimg "$IMG" 32M
	mnt
	run python3 - "$MNT" <<-'EOF'
	import ctypes, errno, os, sys, time
	os.chdir(sys.argv[1])
	libc = ctypes.CDLL(None, use_errno=True)
	def rename2(a, b, flags):
	    if libc.renameat2(-100, a.encode(), -100, b.encode(), flags):
	        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
	def fails(err, f, *args):
	    try:
	        f(*args)
	    except OSError as e:
	        assert e.errno == err, (f, args, e)
	        return
	    raise AssertionError("%s%s succeeded" % (f.__name__, args))
	def put(path, data):
	    with open(path, "w") as f:
	        f.write(data)
	def get(path):
	    with open(path) as f:
	        return f.read()
	links = lambda p: os.lstat(p).st_nlink
	os.makedirs("a/sub")
	os.mkdir("b")
	put("a/f", "f")
	os.rename("a/f", "a/g")                       # in one directory
	assert get("a/g") == "f" and not os.path.exists("a/f")
	os.rename("a/g", "b/g")                       # across directories
	put("b/h", "h")
	os.rename("b/g", "b/h")                       # over a file
	assert get("b/h") == "f" and os.listdir("b") == ["h"]
	os.rename("a/sub", "a/sub2")                  # a directory, in place
	assert links("a") == 3
	os.rename("a/sub2", "b/sub")                  # a directory moves
	assert links("a") == 2 and links("b") == 3
	assert os.stat("b/sub/..").st_ino == os.stat("b").st_ino
	os.mkdir("a/empty")
	os.rename("b/sub", "a/empty")                 # over an empty directory
	assert links("a") == 3 and links("b") == 2
	os.mkdir("a/full"); put("a/full/x", "x")
	os.mkdir("a/d")
	fails(errno.ENOTEMPTY, os.rename, "a/d", "a/full")
	fails(errno.EISDIR, os.rename, "b/h", "a/full")
	fails(errno.ENOTDIR, os.rename, "a/d", "b/h")
	fails(errno.EINVAL, os.rename, "a", "a/d/inside")
	fails(errno.ENOENT, os.rename, "a/missing", "a/other")
	os.rename("b/h", "b/h")                       # onto itself
	os.link("b/h", "b/h2")
	os.rename("b/h", "b/h2")                      # two names of one file
	assert os.path.exists("b/h") and links("b/h2") == 2
	put("n1", "1"); put("n2", "2")
	fails(errno.EEXIST, rename2, "n1", "n2", 1)   # RENAME_NOREPLACE
	c0 = os.stat("n1").st_ctime_ns
	time.sleep(0.01)
	rename2("n1", "n3", 1)
	assert get("n3") == "1"
	assert os.stat("n3").st_ctime_ns > c0         # ext4's way (pjdfstest asks it of ext4 only)
	fails(errno.EINVAL, rename2, "n3", "n2", 2)   # RENAME_EXCHANGE: not supported
	assert get("n3") == "1" and get("n2") == "2"
	os.symlink("n2", "ln")
	os.rename("ln", "b/ln")                       # a symlink moves, target as it was
	assert os.readlink("b/ln") == "n2"
	print("ok")
	EOF
	assert_output ok
	umnt
}

@test "a full image reports ENOSPC to the program and loses nothing already written" {
	mkimg "$IMG" 8M
	head -c $((1 << 20)) /dev/urandom >"$T/chunk"
	mnt
	n=0
	while cp "$T/chunk" "$MNT/f$n" 2>"$T/err"; do
		n=$((n + 1))
		[ $n -lt 100 ] || fail "8M took 100 MiB"
	done
	run cat "$T/err"
	assert_output --partial "No space left on device"
	[ $n -ge 4 ] || fail "only $n files fit"
	# the last copy holds a prefix of its source, and the others all of it
	check_files() {
		local i
		for i in $(seq "$1" $((n - 1))); do
			cmp "$T/chunk" "$MNT/f$i" || return 1
		done
		cmp -n "$(stat -c %s "$MNT/f$n")" "$T/chunk" "$MNT/f$n"
	}
	check_files 0
	# what is removed is room again
	rm "$MNT/f0"
	cp "$T/chunk" "$MNT/again"
	umnt
	mnt
	check_files 1
	cmp "$T/chunk" "$MNT/again"
	umnt
}

@test "two tar -x at once into different directories, and two processes appending to one file" {
	make_tree "$T/src" 600 5
	tar -C "$T/src" -cf "$T/src.tar" .
	mkimg "$IMG" 256M
	mnt -o max_threads=4
	mkdir "$MNT/a" "$MNT/b"
	tar -C "$MNT/a" -xf "$T/src.tar" &
	one=$!
	tar -C "$MNT/b" -xf "$T/src.tar" &
	two=$!
	appender() {
		python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
for i in range(3000):
    os.write(fd, ("%s %05d %s\n" % (sys.argv[2], i, "x" * (i % 50))).encode())
' "$MNT/log" "$1"
	}
	appender A &
	three=$!
	appender B &
	four=$!
	wait $one
	wait $two
	wait $three
	wait $four
	diff -r "$T/src" "$MNT/a"
	diff -r "$T/src" "$MNT/b"
	assert_equal "$(wc -l <"$MNT/log")" 6000
	for who in A B; do
		grep "^$who " "$MNT/log" | cut -d' ' -f2 | sort -c
		assert_equal "$(grep -cE "^$who [0-9]{5} x*$" "$MNT/log")" 3000
	done
	umnt
}

@test "a file unlinked while open keeps its data until its last close, then its blocks go" {
	mkimg "$IMG" 64M
	mnt
	run python3 - "$MNT" <<-'EOF'
	import os, sys
	d = sys.argv[1]
	free = lambda: os.statvfs(d).f_bfree
	before = free()
	data = os.urandom(4 << 20)
	fd = os.open(d + "/f", os.O_CREAT | os.O_RDWR, 0o644)
	os.write(fd, data)
	os.fsync(fd)
	fd2 = os.open(d + "/f", os.O_RDONLY)
	os.unlink(d + "/f")
	assert not os.path.exists(d + "/f")
	assert os.fstat(fd).st_nlink == 0
	os.fchmod(fd, 0o600)
	os.pwrite(fd, b"tail", len(data))
	os.fsync(fd)
	assert os.pread(fd2, len(data) + 4, 0) == data + b"tail"
	os.close(fd)
	assert os.pread(fd2, 4, len(data)) == b"tail"
	held = free()
	assert held < before - 1000, (before, held)
	os.close(fd2)
	os.sync()
	print("ok")
	EOF
	assert_output ok
	umnt
	assert_equal "$("$DUMP" -h "$IMG" | awk '/^Inode count:/ { n = $3 } /^Free inodes:/ { f = $3 } END { print n - f }')" 2
}

@test "special files: FIFOs, sockets and devices are made, listed and kept" {
	mkimg "$IMG" 32M
	mnt
	mkfifo -m 600 "$MNT/fifo"
	mknod "$MNT/null" c 1 3
	mknod "$MNT/blk" b 7 0
	python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$MNT/sock"
	run stat -c '%n %F %a %t:%T' "$MNT/fifo" "$MNT/null" "$MNT/blk" "$MNT/sock"
	assert_output "$MNT/fifo fifo 600 0:0
$MNT/null character special file 644 1:3
$MNT/blk block special file 644 7:0
$MNT/sock socket 755 0:0"
	(echo piped >"$MNT/fifo" &)
	assert_equal "$(cat "$MNT/fifo")" piped
	umnt
	mnt
	assert_equal "$(stat -c %t:%T "$MNT/null")" 1:3
	umnt
}

@test "attributes: chmod, chown, truncate and times as asked, UTIME_NOW and UTIME_OMIT included" {
	mkimg "$IMG" 32M
	mnt
	run python3 - "$MNT" <<-'EOF'
	import os, sys, time
	p = sys.argv[1] + "/f"
	with open(p, "w") as f:
	    f.write("x" * 10000)
	os.chmod(p, 0o4711)
	os.chown(p, 42, 43)                             # and Linux clears set-user-ID
	st = os.stat(p)
	assert (st.st_mode & 0o7777, st.st_uid, st.st_gid) == (0o711, 42, 43), st
	os.chmod(p, 0o2755)
	assert os.stat(p).st_mode & 0o7777 == 0o2755
	os.truncate(p, 100)
	assert os.stat(p).st_size == 100 and open(p).read() == "x" * 100
	os.truncate(p, 5000)
	assert open(p).read() == "x" * 100 + "\0" * 4900
	os.utime(p, ns=(1000000000123456789, 1100000000987654321))
	st = os.stat(p)
	assert (st.st_atime_ns, st.st_mtime_ns) == (1000000000123456789, 1100000000987654321)
	ctime = st.st_ctime_ns
	time.sleep(0.01)
	os.utime(p, times=None)                         # UTIME_NOW for both
	st = os.stat(p)
	now = time.time_ns()
	assert abs(st.st_mtime_ns - now) < 5e9 and abs(st.st_atime_ns - now) < 5e9
	assert st.st_ctime_ns > ctime
	import ctypes
	libc = ctypes.CDLL(None, use_errno=True)
	class ts(ctypes.Structure):
	    _fields_ = [("s", ctypes.c_long), ("ns", ctypes.c_long)]
	UTIME_OMIT = (1 << 30) - 2
	times = (ts * 2)(ts(777, 0), ts(0, UTIME_OMIT))   # atime only
	assert libc.utimensat(-100, p.encode(), times, 0) == 0
	st2 = os.stat(p)
	assert st2.st_atime_ns == 777 * 10**9 and st2.st_mtime_ns == st.st_mtime_ns
	print("ok")
	EOF
	assert_output ok
	umnt
}

@test "df reports the image's blocks and inodes" {
	mkimg "$IMG" 64M
	mnt
	mkdir "$MNT/d"
	sync
	read -r blocks bfree files ffree < <(stat -f -c '%b %f %c %d' "$MNT")
	umnt
	run "$DUMP" -h "$IMG"
	assert_line --regexp "^Block count: +$blocks\$"
	assert_line --regexp "^Free blocks: +$bfree\$"
	assert_line --regexp "^Inode count: +$files\$"
	assert_line --regexp "^Free inodes: +$ffree\$"
}

@test "SIGTERM and SIGINT to the daemon unmount and write everything back, clean" {
	mkimg "$IMG" 32M
	for sig in TERM INT; do
		mnt
		echo "$sig" >"$MNT/by-$sig"
		kill -"$sig" "$FUSE_PID"
		wait "$FUSE_PID" || fail "sufs-fuse exited $? on SIG$sig: $(cat "$T/fuse.log")"
		FUSE_PID=
		mountpoint -q "$MNT" && fail "still mounted after SIG$sig"
		run "$FSCK" -fn "$IMG"
		assert_success
		run "$DEBUG" -R "cat /by-$sig" "$IMG"
		assert_output "$sig"
	done
}

@test "-o ro mounts read-only and leaves the image as it was" {
	mkimg "$IMG" 32M
	"$DEBUG" -w -R "mkdir /d" "$IMG"
	before=$(sha "$IMG")
	mnt -o ro
	run touch "$MNT/new"
	assert_failure
	assert_output --partial "Read-only file system"
	ls "$MNT/d"
	umnt
	assert_equal "$(sha "$IMG")" "$before"
}

@test "an image flagged as needing a full check is refused read-write (exit 2), and mounts read-only" {
	mkimg "$IMG" 32M
	"$DEBUG" -w -R "mkdir /d" "$IMG"
	"$DEBUG" -w -R "set_super_value flags 1" "$IMG"
	before=$(sha "$IMG")
	run --separate-stderr "$FUSE" -f "$IMG" "$MNT"
	assert_failure 2
	assert_equal "$stderr" "sufs-fuse: $IMG: cannot mount read-write: it is flagged as needing a full check
sufs-fuse: $IMG: run a full check first: fsck.sufs -f $IMG (or mount it read-only: -o ro)"
	assert_equal "$(sha "$IMG")" "$before"
	mountpoint -q "$MNT" && fail "mounted"
	mnt -o ro
	ls "$MNT/d"
	fuse_unmount "$MNT"
	assert_equal "$(sha "$IMG")" "$before"
}

@test "an image another program writes is refused, and so is a second mount" {
	mkimg "$IMG" 32M
	mnt
	run --separate-stderr "$FUSE" -f "$IMG" "$T"
	assert_failure 2
	assert_equal "$stderr" "sufs-fuse: $IMG: another program has it open for writing (sufs-fuse, pid $FUSE_PID, has it mounted on $MNT)"
	run --separate-stderr "$DEBUG" -w -R "mkdir /x" "$IMG"
	assert_failure
	umnt
}

@test "-o mode=sync and -o mode=async are recorded in the image, softdep again by default" {
	mkimg "$IMG" 32M
	for mode in sync async softdep; do
		if [ $mode = softdep ]; then mnt; else mnt -o mode=$mode; fi
		echo $mode >"$MNT/$mode"
		umnt
		run "$DUMP" -h "$IMG"
		assert_line --regexp "^Write mode: +$mode\$"
	done
}

@test "mount -t fuse.sufs-fuse, as mount.fuse3 runs it, and a line of /etc/fstab" {
	require_cmd unshare
	[ -x /sbin/mount.fuse3 ] || skip "needs mount.fuse3"
	mkimg "$IMG" 32M
	mkdir "$T/sbin"
	ln -s "$FUSE" "$T/sbin/sufs-fuse"
	# mount runs its helpers with root's PATH: sufs-fuse is put in
	# /usr/local/sbin for this mount namespace only
	run unshare -m --propagation private sh -ec '
		mount --bind "$1/sbin" /usr/local/sbin
		mount -t fuse.sufs-fuse -o mode=sync,allow_other "$2" "$3"
		grep -F " $3 fuse.sufs-fuse " /proc/self/mounts | cut -d" " -f1-3
		echo one >"$3/one"
		umount "$3"
		printf "%s %s fuse.sufs-fuse noauto,mode=async 0 0\n" "$2" "$3" >"$1/fstab"
		mount --bind "$1/fstab" /etc/fstab
		mount "$3"
		echo two >"$3/two"
		umount "$3"
	' sh "$T" "$IMG" "$MNT"
	assert_success
	assert_output "$IMG $MNT fuse.sufs-fuse"
	wait_closed "$IMG"
	run "$DEBUG" -R "ls /" "$IMG"
	assert_output --partial one
	assert_output --partial two
	run "$DUMP" -h "$IMG"
	assert_line --regexp "^Write mode: +async\$"
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "without -f the daemon goes to the background once mounted, and exits once unmounted" {
	mkimg "$IMG" 32M
	run "$FUSE" "$IMG" "$MNT"
	assert_success
	assert_output ""
	mountpoint -q "$MNT"
	echo bg >"$MNT/bg"
	fusermount3 -u "$MNT"
	wait_closed "$IMG"
	run "$FSCK" -fn "$IMG"
	assert_success
	run "$DEBUG" -R "cat /bg" "$IMG"
	assert_output bg
}

@test "sufs-fuse --help, --version, and its usage errors (exit 1)" {
	run "$FUSE" --help
	assert_success
	assert_line --index 0 "Usage: sufs-fuse IMAGE MOUNTPOINT [-f] [-d] [-s] [-o OPTION[,OPTION...]]"
	assert_output --partial "allow_other"
	run "$FUSE" --version
	assert_success
	assert_output --regexp '^sufs-fuse \(sufs\) [0-9]'
	run --separate-stderr "$FUSE" "$T/x.img"
	assert_failure 1
	[[ $stderr == "sufs-fuse: expects IMAGE and MOUNTPOINT"$'\n'"Usage: "* ]] || fail "$stderr"
	mkimg "$IMG" 16M
	before=$(sha "$IMG")
	for opt in mode=fast dirty=101 age=x cache=0 timeout=-1 no_such_option; do
		run --separate-stderr "$FUSE" -f "$IMG" "$MNT" -o "$opt"
		assert_failure 1
		[ -n "$stderr" ] || fail "no message for -o $opt"
	done
	run --separate-stderr "$FUSE" -f "$IMG" "$MNT" -o mode=fast
	assert_equal "$stderr" "sufs-fuse: -o mode: softdep, sync or async, not fast"
	assert_equal "$(sha "$IMG")" "$before"
	run --separate-stderr "$FUSE" -f "$T/none.img" "$MNT"
	assert_failure 2
	assert_equal "$stderr" "sufs-fuse: $T/none.img: No such file or directory"
}

@test "the EXAMPLES of sufs-fuse(8) run in order in an empty directory and print what they show" {
	require_cmd findmnt
	require_cmd flock
	require_cmd fuser
	require_cmd jq
	run_examples sufs-fuse.8
	# the daemons are gone, whatever happened
	fuse_cleanup "$T/run/mnt"
	# what the page says varies: the daemon's process, the mount point
	local vary='s/pid [0-9]+/pid (pid)/; s|mounted on /[^ )]*|mounted on (mount point)|'
	diff -u <(sed -E "$vary" "$T/expected") <(sed -E "$vary" "$T/actual")
}

@test "extended attributes and ACLs through the mount: set, get, list, remove, and in the image after" {
	require_cmd setfattr
	require_cmd getfattr
	mkimg "$IMG" 32M
	mnt
	echo data >"$MNT/f"
	mkdir "$MNT/d"
	setfattr -n user.color -v blue "$MNT/f"
	setfattr -n user.big -v "$(printf 'x%.0s' $(seq 300))" "$MNT/f"
	run getfattr --absolute-names --only-values -n user.color "$MNT/f"
	assert_output blue
	run getfattr -d --absolute-names "$MNT/f"
	assert_line 'user.color="blue"'
	setfattr -x user.color "$MNT/f"
	run getfattr -n user.color "$MNT/f"
	assert_failure
	assert_output --partial "No such attribute"
	run setfattr -n bogus.x -v 1 "$MNT/f"
	assert_failure
	if command -v setfacl >/dev/null; then
		setfacl -m u:nobody:rw "$MNT/f"
		run getfacl -cp "$MNT/f"
		assert_line "user:nobody:rw-"
		# the ACL's mask is the mode's group bits, at once
		[ "$(stat -c %a "$MNT/f")" = 664 ]
		setfacl -d -m u:nobody:rx "$MNT/d"
	fi
	umnt
	run "$DEBUG" -R "ea_list /f" "$IMG"
	assert_line --partial "user.big (300)"
	refute_line --partial "user.color"
}

# as_nobody CMD...: run CMD as the user nobody (for the kernel's checks).
as_nobody() {
	runuser -u nobody -- "$@"
}

# open_mount: the image and the mount point where nobody can reach them.
open_mount() {
	OPEN=$(mktemp -d /tmp/sufs-fuse.XXXXXX)
	chmod 755 "$OPEN"
	IMG=$OPEN/fs.img
	MNT=$OPEN/mnt
	mkdir "$MNT"
}

# acl_mount: a fresh image mounted where nobody reaches it, its root open
# to all.
acl_mount() {
	require_cmd setfacl
	require_cmd getfacl
	require_cmd runuser
	open_mount
	mkimg "$IMG" 32M
	mnt
	chmod 755 "$MNT"
}

@test "the kernel enforces ACLs on the mount: a named user's entry grants, the mask limits, -o noacl leaves the mode bits" {
	acl_mount
	echo secret >"$MNT/f"
	chmod 600 "$MNT/f"
	run as_nobody cat "$MNT/f"
	assert_failure
	assert_output --partial "Permission denied"
	setfacl -m u:nobody:r "$MNT/f"
	run as_nobody cat "$MNT/f"
	assert_success
	assert_output secret
	run as_nobody sh -c "echo more >>'$MNT/f'"
	assert_failure
	# the mask cuts the named entry; the mode's group bits are the mask's
	setfacl -m m::- "$MNT/f"
	[ "$(stat -c %a "$MNT/f")" = 600 ]
	run as_nobody cat "$MNT/f"
	assert_failure
	# chmod changes the mask, and with it what nobody may do
	chmod 640 "$MNT/f"
	run as_nobody cat "$MNT/f"
	assert_success
	umnt
	mnt -o noacl
	run as_nobody cat "$MNT/f"
	assert_failure
	run getfacl -cp "$MNT/f"
	assert_line "user:nobody:r--"
	umnt
}

@test "a new file takes its directory's default ACL, a new directory keeps it too, and the umask applies only where there is none" {
	acl_mount
	mkdir "$MNT/d"
	setfacl -d -m u:nobody:rwx "$MNT/d"
	(umask 022 && touch "$MNT/d/x" && mkdir "$MNT/d/sub" && mkfifo "$MNT/d/p")
	run getfacl -cp "$MNT/d/x"
	assert_line "user:nobody:rwx	#effective:rw-"
	assert_line "mask::rw-"
	refute_line --partial "default:"
	[ "$(stat -c %a "$MNT/d/x")" = 664 ] # the umask is not applied
	run getfacl -cp "$MNT/d/sub"
	assert_line "user:nobody:rwx"
	assert_line "default:user:nobody:rwx"
	[ "$(stat -c %a "$MNT/d/sub")" = 775 ]
	run getfacl -cp "$MNT/d/p"
	assert_line "user:nobody:rwx	#effective:rw-"
	# the inherited entry grants: nobody writes a file root made
	run as_nobody sh -c "echo hi >'$MNT/d/x'"
	assert_success
	# a grandchild inherits through the new directory
	touch "$MNT/d/sub/y"
	run getfacl -cp "$MNT/d/sub/y"
	assert_line "user:nobody:rwx	#effective:rw-"
	# no default ACL: the umask, as everywhere
	(umask 077 && touch "$MNT/y" && mkdir "$MNT/z")
	[ "$(stat -c %a "$MNT/y")" = 600 ]
	[ "$(stat -c %a "$MNT/z")" = 700 ]
	run getfacl -cp "$MNT/y"
	refute_line --partial "user:nobody"
	umnt
}

@test "a round trip: a tree with user. attributes and ACLs, mkfs.sufs -d, the same seen on the mount (getfattr, getfacl) and after rdump" {
	acl_tree
	attr_listing "$SRC" >"$T/want"
	"$MKFS" -q -d "$SRC" "$IMG" 32M
	mnt
	attr_listing "$MNT" >"$T/got"
	run diff -u "$T/want" "$T/got"
	assert_success
	grep -q "user:1234:rw-" "$T/got" # not two empty listings
	# changed on the mount, then rdump
	setfattr -n user.added -v 1 "$MNT/dir/file"
	setfacl -m u:99:r "$MNT/big"
	umnt
	setfattr -n user.added -v 1 "$SRC/dir/file"
	setfacl -m u:99:r "$SRC/big"
	attr_listing "$SRC" >"$T/want"
	mkdir "$T/out"
	run "$DEBUG" -R "rdump / $T/out" "$IMG"
	assert_success
	attr_listing "$T/out" >"$T/got"
	run diff -u "$T/want" "$T/got"
	assert_success
	grep -q "user.added" "$T/got"
}

@test "-o direct: the image read and written with O_DIRECT; what was written is there after a remount" {
	make_tree "$T/src" 300 5
	mkimg "$IMG" 64M
	mnt -o direct
	grep -q "sufs-fuse" /proc/mounts
	cp -a "$T/src/." "$MNT/"
	# the daemon's descriptors: one of them opened with O_DIRECT (040000)
	run bash -c "for f in /proc/$FUSE_PID/fdinfo/*; do
		[ \"\$(readlink /proc/$FUSE_PID/fd/\${f##*/})\" = '$IMG' ] && grep '^flags' \$f; done"
	assert_line --regexp '^flags:\s+[0-7]*[4-7][0-7]{4}$'
	umnt
	mnt -o direct,ro
	diff -r "$T/src" "$MNT"
	umnt
}
