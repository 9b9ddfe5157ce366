#!/usr/bin/env bats
# mkfs.sufs: options, bad input and its exit statuses, probing, -d and
# reproducible images.  Results are read back with sufs-dump and sufs-debug.

bats_require_minimum_version 1.5.0
load helper

# A directory that an unprivileged user can reach ($T's parents are private),
# for the tests that run mkfs.sufs as nobody; removed by teardown.
nobody_dir() {
	N=$(mktemp -d /tmp/mkfs-bats.XXXXXX)
	chmod 755 "$N"
}

# loopdev SIZE: a loop device over a fresh file in $T, in $LOOP; removed by teardown.
loopdev() {
	require_root
	require_cmd losetup
	truncate -s "$1" "$T/loop.img"
	LOOP=$(losetup -f --show "$T/loop.img" 2>/dev/null) || skip "no loop devices here"
}

# smallfs SIZE: a tmpfs of SIZE bytes at $SMALL; unmounted by teardown.
smallfs() {
	require_root
	SMALL=$T/small
	mkdir "$SMALL"
	mount -t tmpfs -o size="$1" tmpfs "$SMALL" 2>/dev/null || { SMALL=; skip "cannot mount a tmpfs here"; }
}

teardown() {
	if [ -n "${SMALL:-}" ]; then
		umount "$SMALL"
	fi
	if [ -n "${LOOP:-}" ]; then
		losetup -d "$LOOP"
	fi
	if [ -n "${N:-}" ]; then
		chmod -R u+rwx "$N" 2>/dev/null || true
		rm -rf "$N"
	fi
}

run_as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}

# sb IMG FIELD: the value of a superblock field as `sufs-dump -h` prints it.
sb() {
	"$DUMP" -h "$1" | sed -n "s/^$2: *//p"
}

# dbg IMG COMMAND: run one sufs-debug command.
dbg() {
	"$DEBUG" -R "$2" "$1"
}

# A small tree with one of everything mkfs -d copies.
mksrc() {
	local d=$1
	mkdir -p "$d/sub/deeper" "$d/empty"
	printf 'hello\n' >"$d/hello"
	head -c 300000 /dev/urandom >"$d/sub/random"
	ln "$d/sub/random" "$d/sub/deeper/random-link"
	ln -s ../hello "$d/sub/to-hello"
	ln -s "$(printf 'x%.0s' $(seq 200))" "$d/long-symlink"
	mkfifo "$d/fifo"
	: >"$d/empty-file"
	chmod 4750 "$d/hello"
	chmod 1777 "$d/empty"
	touch -h -d @1600000000 "$d/sub/to-hello" "$d/hello" "$d/sub" "$d"
}

@test "mkfs --help prints the usage and exits 0" {
	run "$MKFS" --help
	assert_success
	assert_output --partial "Usage: mkfs.sufs [options] IMAGE [SIZE]"
	assert_output --partial "-d DIR"
}

@test "mkfs --help says the root directory's owner is the source's with -d" {
	run "$MKFS" --help
	assert_success
	assert_output --partial "(default: the owner of DIR with -d, else the caller)"
}

@test "mkfs --version prints the version" {
	run "$MKFS" --version
	assert_success
	assert_output --regexp '^mkfs\.sufs \(sufs\) [0-9]+\.[0-9]+'
	run "$MKFS" -V
	assert_success
	assert_output --regexp '^mkfs\.sufs \(sufs\) [0-9]+\.[0-9]+'
}

@test "mkfs makes an image file of SIZE bytes that sufs-dump accepts" {
	run "$MKFS" "$T/img" 16M
	assert_success
	assert_output --partial "Block size:          4096"
	assert_output --partial "Blocks:              4096 (16.0 MiB)"
	[ "$(stat -c %s "$T/img")" -eq $((16 << 20)) ]
	run sb "$T/img" "Block count"
	assert_output "4096"
}

@test "SIZE takes K, M and G suffixes, and a bare number is KiB as in mke2fs" {
	"$MKFS" -q "$T/k" 8192K
	"$MKFS" -q "$T/m" 8M
	"$MKFS" -q "$T/g" 1G
	"$MKFS" -q "$T/b" 8192
	[ "$(stat -c %s "$T/k")" -eq $((8 << 20)) ]
	[ "$(stat -c %s "$T/m")" -eq $((8 << 20)) ]
	[ "$(stat -c %s "$T/g")" -eq $((1 << 30)) ]
	[ "$(stat -c %s "$T/b")" -eq $((8 << 20)) ]
	run sb "$T/g" "Block count"
	assert_output "262144"
}

@test "mkfs extends an existing file to SIZE" {
	truncate -s 4M "$T/img"
	run "$MKFS" -q "$T/img" 32M
	assert_success
	[ "$(stat -c %s "$T/img")" -eq $((32 << 20)) ]
	run sb "$T/img" "Block count"
	assert_output "8192"
}

@test "mkfs without SIZE uses the whole existing file" {
	truncate -s 12M "$T/img"
	run "$MKFS" -q "$T/img"
	assert_success
	run sb "$T/img" "Block count"
	assert_output "3072"
}

@test "mkfs uses a block device whole" {
	loopdev 24M
	run "$MKFS" -q "$LOOP"
	assert_success
	run sb "$LOOP" "Block count"
	assert_output "6144"
}

@test "mkfs on a block device uses SIZE when it asks for less" {
	loopdev 24M
	run "$MKFS" -q "$LOOP" 8M
	assert_success
	run sb "$LOOP" "Block count"
	assert_output "2048"
}

@test "mkfs refuses a SIZE larger than the block device" {
	loopdev 24M
	run "$MKFS" -q "$LOOP" 32M
	assert_failure 1
	assert_output --partial "SIZE 33554432 is larger than the device $LOOP (25165824 bytes)"
	run "$DUMP" -h "$LOOP"
	assert_failure
}

@test "mkfs -f on a block device leaves no trace of the old file system" {
	require_cmd mke2fs
	require_cmd blkid
	loopdev 24M
	mke2fs -q -F -t ext4 "$LOOP"
	run "$MKFS" -q "$LOOP"
	assert_failure 2
	assert_output --partial "contains an ext4 file system"
	"$MKFS" -q -f "$LOOP" 16M
	run blkid -p "$LOOP"
	refute_output --partial ext4
	run sb "$LOOP" "Block count"
	assert_output "4096"
}

@test "mkfs clears what an existing file held" {
	head -c 16M /dev/urandom >"$T/img"
	"$MKFS" -q "$T/img"
	# past the metadata of the only group, every block is free and zero
	run cmp -n $((8 << 20)) -i $((8 << 20)):0 "$T/img" /dev/zero
	assert_success
}

@test "mkfs -b 1024 makes 1 KiB blocks" {
	run "$MKFS" -b 1024 "$T/img" 16M
	assert_success
	assert_output --partial "Block size:          1024"
	run sb "$T/img" "Block size"
	assert_output "1024"
	run sb "$T/img" "Block count"
	assert_output "16384"
}

@test "mkfs -b 64K makes 64 KiB blocks" {
	"$MKFS" -q -b 64K "$T/img" 16M
	run sb "$T/img" "Block size"
	assert_output "65536"
}

@test "mkfs -b refuses a block size that is not a power of two from 1024 to 65536" {
	for bs in 3000 512 131072 0 4k2 x; do
		run "$MKFS" -b "$bs" "$T/img" 16M
		assert_failure 1
		assert_output --partial "block size"
	done
	[ ! -e "$T/img" ]
}

@test "mkfs -i sets the bytes per inode" {
	"$MKFS" -q -i 65536 "$T/img" 16M
	run sb "$T/img" "Inode count"
	assert_output "256"
	"$MKFS" -q -f -i 4096 "$T/img" 16M
	run sb "$T/img" "Inode count"
	assert_output "4096"
}

@test "mkfs -i refuses a value below 1024" {
	run "$MKFS" -i 100 "$T/img" 16M
	assert_failure 1
	assert_output --partial "invalid bytes per inode '100'"
}

@test "mkfs -N makes at least that many inodes" {
	"$MKFS" -q -N 100 "$T/img" 16M
	n=$(sb "$T/img" "Inode count")
	# rounded up to whole inode-table blocks (16 inodes of 256 bytes in 4 KiB)
	[ "$n" -ge 100 ]
	[ "$n" -lt 116 ]
}

@test "mkfs -N with more inodes than the image can hold exits 4" {
	run "$MKFS" -N 4000000 "$T/img" 16M
	assert_failure 4
	assert_output "mkfs.sufs: -N 4000000: too many inodes (4000000): a group holds at most 32768 (8 times the block size), 32768 in 1 group; use a smaller -N or a smaller -g"
	[ ! -e "$T/img" ]
}

@test "mkfs -i below the block size with default groups exits 4 naming the limit" {
	run "$MKFS" -n -i 1024 "$T/img" 1G
	assert_failure 4
	assert_output "mkfs.sufs: -i 1024: too many inodes (1048576): a group holds at most 32768 (8 times the block size), 262144 in 8 groups; use a larger -i or a smaller -g"
	# the limit exactly, and the smaller groups the message suggests
	run "$MKFS" -n -i 4096 "$T/img" 1G
	assert_success
	assert_line "Inodes per group:    32768"
	run "$MKFS" -n -i 1024 -g 8192 "$T/img" 1G
	assert_success
	assert_line "Inodes per group:    32768"
	[ ! -e "$T/img" ]
}

@test "mkfs with inode tables that leave a group no room for data says how many fit" {
	run "$MKFS" -n -g 64 -N 100000 "$T/img" 16M
	assert_failure 4
	assert_output "mkfs.sufs: -N 100000: too many inodes (100000): at most 47104 leave room for data, 736 in each of 64 groups; use a smaller -N"
	run "$MKFS" -n -g 64 -N 47104 "$T/img" 16M
	assert_success
}

@test "mkfs -b 64K: the default ratio asks for no more inodes than the groups hold" {
	run "$MKFS" -n -b 64K "$T/img" 10G
	assert_success
	assert_line --regexp '^Inodes: +524288$'
	run "$MKFS" -n -b 64K -i 16384 "$T/img" 10G
	assert_failure 4
	assert_output --partial "mkfs.sufs: -i 16384: too many inodes (655360)"
	run "$MKFS" -n -b 64K -i 64K "$T/img" 10G
	assert_success
}

@test "the default ratio asks for no more inodes than 32 bits number, and no count makes fewer than 16" {
	# 64 TiB at one inode per 16 KiB would be 2^32 inodes: the most that
	# fit in its 524288 groups, in whole blocks of inodes, are 8176 each
	run "$MKFS" -n "$T/img" 64T
	assert_success
	assert_line --regexp '^Inodes: +4286578688$'
	assert_line --regexp '^Inodes per group: +8176$'
	for opt in "-N 1" "-i 1G"; do
		# shellcheck disable=SC2086
		run "$MKFS" -n -b 1024 $opt "$T/img" 16M
		assert_success
		assert_line --regexp '^Inodes: +16$'
	done
	[ ! -e "$T/img" ]
}

@test "mkfs -g sets the blocks per group and places backups in groups 1 and 3" {
	run "$MKFS" -g 1024 "$T/img" 16M
	assert_success
	assert_output --partial "Groups:              4"
	assert_output --partial "Superblock backups:  at blocks 1024, 3072"
	run sb "$T/img" "Blocks per group"
	assert_output "1024"
	run sb "$T/img" "Group count"
	assert_output "4"
}

@test "mkfs -g refuses a count that is not a multiple of 8 from 64 to 8 * block size" {
	for g in 1004 32 32776 abc 0; do
		run "$MKFS" -g "$g" "$T/img" 16M
		assert_failure 1
	done
	run "$MKFS" -b 1024 -g 16384 "$T/img" 16M
	assert_failure 1
	assert_output --partial "from 64 to 8192"
}

@test "mkfs -L sets the label" {
	run "$MKFS" -L "my data" "$T/img" 16M
	assert_success
	assert_output --partial "Label:               my data"
	run sb "$T/img" "Filesystem volume name"
	assert_output "my data"
}

@test "mkfs -L accepts 63 bytes and refuses 64" {
	l63=$(printf 'a%.0s' $(seq 63))
	run "$MKFS" -q -L "$l63" "$T/img" 16M
	assert_success
	run sb "$T/img" "Filesystem volume name"
	assert_output "$l63"
	run "$MKFS" -q -f -L "${l63}b" "$T/img2" 16M
	assert_failure 1
	assert_output --partial "too long"
	[ ! -e "$T/img2" ]
}

@test "mkfs -U sets the UUID" {
	u=0a1b2c3d-4e5f-4a6b-8c7d-8e9fa0b1c2d3
	run "$MKFS" -U "${u^^}" "$T/img" 16M
	assert_success
	assert_output --partial "UUID:                $u"
	run sb "$T/img" "Filesystem UUID"
	assert_output "$u"
}

@test "mkfs -U random gives each image a different version 4 UUID" {
	"$MKFS" -q -U random "$T/a" 16M
	"$MKFS" -q -U random "$T/b" 16M
	a=$(sb "$T/a" "Filesystem UUID")
	b=$(sb "$T/b" "Filesystem UUID")
	[ "$a" != "$b" ]
	[[ $a =~ ^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$ ]]
}

@test "mkfs -U refuses a UUID not in the 8-4-4-4-12 form" {
	for u in nonsense 0a1b2c3d4e5f4a6b8c7d8e9fa0b1c2d3 0a1b2c3d-4e5f-4a6b-8c7d-8e9fa0b1c2dg \
		0a1b2c3d-4e5f-4a6b-8c7d-8e9fa0b1c2d 0a1b2c3d-4e5f-4a6b-8c7d-8e9fa0b1c2d33 \
		0a1b2c3-d4e5f-4a6b-8c7d-8e9fa0b1c2d3 0a1b2c3d04e5f04a6b08c7d08e9fa0b1c2d3; do
		run "$MKFS" -U "$u" "$T/img" 16M
		assert_failure 1
		assert_output --partial "invalid UUID '$u'"
	done
}

@test "mkfs -n writes nothing" {
	run "$MKFS" -n -L dry "$T/img" 16M
	assert_success
	assert_output --partial "Would create a sufs file system on $T/img"
	assert_output --partial "Blocks:              4096"
	[ ! -e "$T/img" ]
	head -c 1M /dev/urandom >"$T/data"
	before=$(sha "$T/data")
	run "$MKFS" -n "$T/data" 16M
	assert_success
	[ "$(sha "$T/data")" = "$before" ]
	[ "$(stat -c %s "$T/data")" -eq $((1 << 20)) ]
}

@test "mkfs -n of an image in a missing directory exits 2 as mkfs does" {
	run "$MKFS" -n "$T/nowhere/img" 16M
	assert_failure 2
	assert_output "mkfs.sufs: cannot open $T/nowhere/img for writing: No such file or directory"
	run "$MKFS" -q "$T/nowhere/img" 16M
	assert_failure 2
	assert_output "mkfs.sufs: cannot open $T/nowhere/img for writing: No such file or directory"
	[ ! -e "$T/nowhere" ]
}

@test "mkfs -n of an image it may not write exits 2 and changes nothing" {
	require_root
	require_cmd setpriv
	nobody_dir
	head -c 1M /dev/urandom >"$N/img"
	chmod 444 "$N/img"
	touch -d @1600000000 "$N/img"
	before=$(sha "$N/img")
	run run_as_nobody "$MKFS" -n "$N/img" 16M
	assert_failure 2
	assert_output "mkfs.sufs: cannot open $N/img for writing: Permission denied"
	[ "$(sha "$N/img")" = "$before" ]
	[ "$(stat -c %Y "$N/img")" -eq 1600000000 ]
	# a directory it may not write: nothing is made in it
	run run_as_nobody "$MKFS" -n "$N/new.img" 16M
	assert_failure 2
	assert_output "mkfs.sufs: cannot open $N/new.img for writing: Permission denied"
	[ ! -e "$N/new.img" ]
	# a file it may write is opened and left as it was
	chmod 666 "$N/img"
	touch -d @1600000000 "$N/img"
	run run_as_nobody "$MKFS" -n "$N/img" 16M
	assert_success
	[ "$(sha "$N/img")" = "$before" ]
	[ "$(stat -c %Y "$N/img")" -eq 1600000000 ]
}

@test "mkfs -n prints the layout that mkfs then makes" {
	run "$MKFS" -n -b 1024 -g 2048 -U 0a1b2c3d-4e5f-4a6b-8c7d-8e9fa0b1c2d3 "$T/img" 20M
	assert_success
	dry=${output/Would create a/Creating a}
	run "$MKFS" -b 1024 -g 2048 -U 0a1b2c3d-4e5f-4a6b-8c7d-8e9fa0b1c2d3 "$T/img" 20M
	assert_success
	assert_output "$dry"
}

@test "mkfs -d on a terminal shows a bar of the entries copied; -q draws none" {
	mkdir "$T/tree"
	for i in $(seq 100); do echo "$i" >"$T/tree/f$i"; done
	on_tty "$MKFS" -d "$T/tree" "$T/a.img" 8M
	assert_success
	assert_line "Copying files: [#########################               ] 64/100"
	assert_line "Copying files: [########################################] 100/100"
	on_tty "$MKFS" -q -d "$T/tree" "$T/b.img" 8M
	assert_success
	assert_output ""
}

@test "mkfs -q prints nothing on stdout" {
	mkdir "$T/src"
	echo hi >"$T/src/f"
	run --separate-stderr "$MKFS" -q -d "$T/src" "$T/img" 16M
	assert_success
	[ -z "$output" ]
	[ -z "$stderr" ]
}

@test "mkfs without -q says what it made" {
	run "$MKFS" -U 0a1b2c3d-4e5f-4a6b-8c7d-8e9fa0b1c2d3 -L lbl "$T/img" 16M
	assert_success
	assert_line "Creating a sufs file system on $T/img"
	assert_line "Inodes:              1024"
	assert_line "Superblock backups:  none"
	assert_line "UUID:                0a1b2c3d-4e5f-4a6b-8c7d-8e9fa0b1c2d3"
	assert_line "Label:               lbl"
}

@test "the root directory belongs to the caller and has mode 0755" {
	"$MKFS" -q "$T/img" 16M
	run dbg "$T/img" "stat /"
	assert_success
	assert_output --partial "Type: directory"
	assert_output --partial "Mode:  0755"
	assert_output --regexp "User: +$(id -u) +Group: +$(id -g) "
}

@test "mkfs -E root_owner=UID:GID sets the root directory's owner" {
	"$MKFS" -q -E root_owner=1234:5678 "$T/img" 16M
	run dbg "$T/img" "stat /"
	assert_output --regexp "User: +1234 +Group: +5678 "
}

@test "mkfs -E refuses a malformed root_owner and unknown options" {
	run "$MKFS" -E root_owner=12 "$T/img" 16M
	assert_failure 1
	assert_output --partial "root_owner"
	run "$MKFS" -E root_owner=a:b "$T/img" 16M
	assert_failure 1
	run "$MKFS" -E frobnicate "$T/img" 16M
	assert_failure 1
	assert_output --partial "unknown extended option 'frobnicate'"
	[ ! -e "$T/img" ]
}

# ---- bad input ----------------------------------------------------------------

@test "mkfs without IMAGE is a usage error" {
	run "$MKFS"
	assert_failure 1
	assert_output --partial "no IMAGE given"
}

@test "mkfs with too many arguments is a usage error" {
	run "$MKFS" "$T/img" 16M extra
	assert_failure 1
	assert_output --partial "too many arguments"
}

@test "mkfs of a file that does not exist needs a SIZE" {
	run "$MKFS" "$T/img"
	assert_failure 1
	assert_output --partial "$T/img does not exist: give a SIZE"
	[ ! -e "$T/img" ]
}

@test "mkfs refuses a malformed SIZE" {
	for s in 12Q -5M M 1.5G 99999999999999999999; do
		run "$MKFS" -- "$T/img" "$s"
		assert_failure 1
		assert_output --partial "invalid SIZE '$s'"
	done
	[ ! -e "$T/img" ]
}

@test "mkfs of a size too small for the layout exits 4, says why, and creates nothing" {
	run "$MKFS" "$T/img" 16K
	assert_failure 4
	assert_output "mkfs.sufs: cannot lay out a file system of 16384 bytes on $T/img: too small, it needs at least 64 blocks (262144 bytes with 4096-byte blocks)"
	[ ! -e "$T/img" ]
	run "$MKFS" "$T/img" 0
	assert_failure 4
	[ ! -e "$T/img" ]
	run "$MKFS" "$T/img" 16
	assert_failure 4
	assert_output --partial "of 16384 bytes"
	[ ! -e "$T/img" ]
	# groups so small that the first cannot hold the descriptors of all
	run "$MKFS" -b 1024 -g 64 "$T/img" 64M
	assert_failure 4
	assert_output "mkfs.sufs: cannot lay out a file system of 67108864 bytes on $T/img: its 1024 groups of 64 blocks need 64 blocks of group descriptors, and the first group cannot hold them with its own metadata (70 blocks); use a larger -g or a smaller SIZE"
	[ ! -e "$T/img" ]
	run "$MKFS" -q -b 1024 -g 64 "$T/img" 16M
	assert_success
}

@test "mkfs of so many groups that their inodes outnumber 32 bits exits 4 and says so" {
	# 2^24 groups of 2^19 64 KiB blocks: one block of 256 inodes each is 2^32
	run "$MKFS" -n -b 64K "$T/img" 524288T
	assert_failure 4
	assert_output "mkfs.sufs: cannot lay out a file system of 576460752303423488 bytes on $T/img: its 16777216 groups of 524288 blocks are too many, at most 16777215 can have a block of inodes each (inode numbers are 32 bits); use a smaller SIZE (at most 576460717943685120 bytes)"
	run "$MKFS" -n -q -b 64K "$T/img" 562949919866880K
	assert_success
	# the advice names only what is not at its limit yet
	run "$MKFS" -n -b 64K -g 65536 "$T/img" 65536T
	assert_failure 4
	assert_output --partial "; use a larger -g, or a smaller SIZE"
	run "$MKFS" -n -b 1024 "$T/img" 64T
	assert_failure 4
	assert_output --partial "; use a larger -b or a smaller SIZE"
	# more groups than a 32-bit count holds
	run "$MKFS" -n -b 1024 -g 64 "$T/img" 256T
	assert_failure 4
	assert_output "mkfs.sufs: cannot lay out a file system of 281474976710656 bytes on $T/img: its 4294967296 groups of 64 blocks are too many, at most 1073741823 can have a block of inodes each (inode numbers are 32 bits); use a larger -g or -b, or a smaller SIZE"
	[ ! -e "$T/img" ]
}

@test "mkfs refuses an unknown option" {
	run "$MKFS" -Z "$T/img" 16M
	assert_failure 1
	assert_output --partial "Try 'mkfs.sufs --help'"
}

@test "every program names itself in its option errors, not the path it ran from" {
	local p name
	for p in "$MKFS" "$FSCK" "$DEBUG" "$DUMP" "$REPLAY" "$SNAP"; do
		name=${p##*/}
		run --separate-stderr "$p" --no-such-option
		[ "$status" -ne 0 ] || fail "$name accepted --no-such-option"
		[[ ${stderr%%$'\n'*} == "$name: unrecognized option '--no-such-option'" ]] ||
			fail "$name said: ${stderr%%$'\n'*}"
	done
}

@test "mkfs refuses a directory as IMAGE" {
	mkdir "$T/dir"
	run "$MKFS" "$T/dir" 16M
	assert_failure 2
	assert_output --partial "$T/dir is neither a regular file nor a block device"
}

@test "mkfs of an image below a file that is not a directory exits 2, with -n too" {
	touch "$T/file"
	run "$MKFS" "$T/file/img" 16M
	assert_failure 2
	assert_output "mkfs.sufs: cannot use $T/file/img: Not a directory"
	run "$MKFS" -n "$T/file/img" 16M
	assert_failure 2
	assert_output "mkfs.sufs: cannot use $T/file/img: Not a directory"
	[ ! -s "$T/file" ]
}

@test "mkfs of an image it may not write exits 2 and leaves the file alone" {
	require_root
	require_cmd setpriv
	nobody_dir
	head -c 1M /dev/zero >"$N/img"
	chmod 444 "$N/img"
	run run_as_nobody "$MKFS" -q "$N/img" 16M
	assert_failure 2
	assert_output --partial "cannot open $N/img for writing: Permission denied"
	[ "$(stat -c %s "$N/img")" -eq $((1 << 20)) ]
}

@test "mkfs of an image it may write but not read exits 2 before writing, as it cannot look for a file system" {
	require_root
	require_cmd setpriv
	nobody_dir
	head -c 1M /dev/zero >"$N/img"
	chown 65534:65534 "$N/img"
	chmod 200 "$N/img"
	run run_as_nobody "$MKFS" -q "$N/img" 16M
	assert_failure 2
	assert_output "mkfs.sufs: cannot probe $N/img: Permission denied"
	[ "$(stat -c %s "$N/img")" -eq $((1 << 20)) ]
	cmp -n $((1 << 20)) "$N/img" /dev/zero
}

@test "mkfs of an image in a directory it may not write exits 2" {
	require_root
	require_cmd setpriv
	nobody_dir
	run run_as_nobody "$MKFS" -q "$N/img" 16M
	assert_failure 2
	assert_output --partial "cannot open $N/img for writing: Permission denied"
	[ ! -e "$N/img" ]
}

@test "mkfs of a SIZE the host cannot hold exits 2 and leaves the file as it was" {
	head -c 1M /dev/urandom >"$T/img"
	before=$(sha "$T/img")
	# a file size limit of 4 MiB: growing the file to 16 MiB fails (EFBIG)
	run bash -c 'ulimit -f 4096; exec "$0" -q "$1" 16M' "$MKFS" "$T/img"
	assert_failure 2
	assert_output --partial "cannot set the size of $T/img to 16777216 bytes: File too large"
	[ "$(sha "$T/img")" = "$before" ]
	run bash -c 'ulimit -f 4096; exec "$0" -q "$1" 16M' "$MKFS" "$T/new"
	assert_failure 2
	[ ! -e "$T/new" ]
}

@test "mkfs that runs out of space on the host exits 16 and removes the image it made" {
	smallfs 1M
	mkdir "$T/src"
	head -c 3M /dev/urandom >"$T/src/f"
	run "$MKFS" -q -d "$T/src" "$SMALL/img" 64M
	assert_failure 16
	assert_output --partial "cannot write $SMALL/img: No space left on device"
	[ ! -e "$SMALL/img" ]
}

@test "mkfs refuses a malformed SOURCE_DATE_EPOCH" {
	for v in yesterday 12abc -5 "" 1.5 0x10 010 " 5" 9223372036854775808; do
		SOURCE_DATE_EPOCH=$v run "$MKFS" "$T/img" 16M
		assert_failure 1
		assert_output --partial "invalid SOURCE_DATE_EPOCH '$v'"
	done
	[ ! -e "$T/img" ]
}

@test "mkfs shows control characters in labels, images, paths and names escaped" {
	esc=$(printf '\033')
	run "$MKFS" -L "x${esc}[2Jy" "$T/i${esc}mg" 16M
	assert_success
	assert_line "Creating a sufs file system on $T/i\\x1bmg"
	assert_line 'Label:               x\x1b[2Jy'
	[[ $output != *$esc* ]]
	run "$MKFS" -q "$T/i${esc}mg"
	assert_failure 2
	assert_output "mkfs.sufs: $T/i\\x1bmg contains a sufs file system (label \"x\\x1b[2Jy\"); use -f to overwrite"
	run "$MKFS" -q -d "$T/no${esc}where" "$T/img" 16M
	assert_failure 8
	assert_output "mkfs.sufs: cannot use source directory $T/no\\x1bwhere: No such file or directory"
	# names in the tree: the image inside it, and a tree that does not fit
	mkdir "$T/s${esc}rc"
	truncate -s 4M "$T/s${esc}rc/i${esc}mg"
	head -c 6M /dev/urandom >"$T/s${esc}rc/z${esc}big"
	run "$MKFS" -q -d "$T/s${esc}rc" "$T/s${esc}rc/i${esc}mg"
	assert_failure 8
	assert_line "mkfs.sufs: warning: $T/s\\x1brc/i\\x1bmg: not copying the image into itself"
	assert_line "mkfs.sufs: $T/s\\x1brc/z\\x1bbig: cannot write: No space left on device"
	[[ $output != *$esc* ]]
}

# ---- probing --------------------------------------------------------------------

@test "mkfs refuses to overwrite an ext4 file system without -f" {
	require_cmd mke2fs
	mke2fs -q -F -t ext4 -L root "$T/img" 8M
	before=$(sha "$T/img")
	run "$MKFS" "$T/img"
	assert_failure 2
	assert_output --partial "$T/img contains an ext4 file system (label \"root\"); use -f to overwrite"
	[ "$(sha "$T/img")" = "$before" ]
	run "$MKFS" -n "$T/img"
	assert_failure 2
	run "$MKFS" -q -f "$T/img"
	assert_success
	run sb "$T/img" "Block count"
	assert_output "2048"
	run blkid -p "$T/img"
	refute_output --partial ext4
}

@test "mkfs refuses to overwrite a sufs file system without -f" {
	"$MKFS" -q -L old "$T/img" 16M
	run "$MKFS" -q "$T/img"
	assert_failure 2
	assert_output --partial "contains a sufs file system (label \"old\"); use -f to overwrite"
	run "$MKFS" -q -f -L new "$T/img"
	assert_success
	run sb "$T/img" "Filesystem volume name"
	assert_output "new"
}

# refused_without_f IMG WHAT: mkfs.sufs without -f refuses IMG, which holds
# WHAT (exit 2, the message naming it), and leaves it as it was
refused_without_f() {
	local before
	before=$(sha "$1")
	run --separate-stderr "$MKFS" -q "$1"
	assert_failure 2
	assert_equal "$stderr" "mkfs.sufs: $1 contains $2; use -f to overwrite"
	[ "$(sha "$1")" = "$before" ]
}

@test "mkfs refuses to overwrite a partition table without -f" {
	# an MBR with one Linux partition: what fdisk leaves on a new disk
	truncate -s 16M "$T/img"
	python3 -c '
import struct, sys
with open(sys.argv[1], "r+b") as f:
    f.seek(446)
    f.write(struct.pack("<B3sB3sII", 0, bytes(3), 0x83, bytes(3), 2048, 30720))
    f.seek(510)
    f.write(b"\x55\xaa")' "$T/img"
	refused_without_f "$T/img" "a dos partition table"
	run "$MKFS" -q -f "$T/img"
	assert_success
	run "$FSCK" -fn "$T/img"
	assert_success
}

@test "mkfs refuses a sufs file system that a check could still repair: a damaged primary, or a backup alone" {
	"$MKFS" -q -L old "$T/img" 64M
	printf '\377' | dd of="$T/img" bs=1 seek=$((1024 + 40)) conv=notrunc status=none
	refused_without_f "$T/img" "a sufs file system, its superblock damaged"
	# the primary's magic gone: fsck would use the backup of group 1
	"$MKFS" -q -f -b 1024 "$T/img" 64M
	printf '\0\0\0\0' | dd of="$T/img" bs=1 seek=1024 conv=notrunc status=none
	run "$FSCK" -fy "$T/img"
	assert_failure 1
	printf '\0\0\0\0' | dd of="$T/img" bs=1 seek=1024 conv=notrunc status=none
	refused_without_f "$T/img" "a sufs file system, its primary superblock lost but a backup whole"
	run "$MKFS" -q -f "$T/img"
	assert_success
}

# ---- -d ----------------------------------------------------------------------------

@test "mkfs -d copies files, directories, symlinks, hard links and fifos" {
	mksrc "$T/src"
	run "$MKFS" -d "$T/src" "$T/img" 16M
	assert_success
	assert_output --partial "Copied from $T/src: 3 regular files, 3 directories, 2 symlinks, 1 hard link, 1 special file (293.0 KiB of data)"
	mkdir "$T/out"
	dbg "$T/img" "rdump / $T/out"
	run diff -r --no-dereference -x fifo "$T/src" "$T/out"
	assert_success
	[ -p "$T/out/fifo" ]
	cmp <(dbg "$T/img" "cat /sub/deeper/random-link") "$T/src/sub/random"
}

@test "mkfs -d copies a tree deeper than its stack would allow a recursive walk" {
	require_cmd python3
	local depth=3000 nofile
	nofile=$(ulimit -n)
	[ "$nofile" = unlimited ] || [ "$nofile" -ge $((depth + 64)) ] || depth=$((nofile - 64))
	python3 - "$T/deep" "$depth" <<'EOF2'
import os, sys
os.mkdir(sys.argv[1])
fd = os.open(sys.argv[1], os.O_RDONLY)
for i in range(int(sys.argv[2])):
    os.mkdir("d", dir_fd=fd)
    sub = os.open("d", os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = sub
open("f", "w", opener=lambda p, f: os.open(p, f, dir_fd=fd)).write("bottom\n")
EOF2
	# 128 KiB of stack: a recursive walk needs some hundred bytes a level
	run bash -c 'ulimit -s 128 && exec "$1" -q -d "$2" "$3" 64M' _ "$MKFS" "$T/deep" "$T/img"
	assert_success
	run "$FSCK" -fn "$T/img"
	assert_success
	assert_output --partial "$((depth + 3))/"
	# a path that deep is too long: one level at a time
	{ for ((i = 0; i < depth; i++)); do echo "cd d"; done; echo "cat f"; } >"$T/walk"
	run "$DEBUG" -f "$T/walk" "$T/img"
	assert_output "bottom"
}

@test "mkfs -d makes hard links names of one inode" {
	mksrc "$T/src"
	"$MKFS" -q -d "$T/src" "$T/img" 16M
	a=$(dbg "$T/img" "stat /sub/random" | sed -n 's/^Inode: \([0-9]*\).*/\1/p')
	b=$(dbg "$T/img" "stat /sub/deeper/random-link" | sed -n 's/^Inode: \([0-9]*\).*/\1/p')
	[ -n "$a" ]
	[ "$a" = "$b" ]
	run dbg "$T/img" "stat /sub/random"
	assert_output --partial "Links: 2"
}

@test "mkfs -d keeps modes, owners and times" {
	require_root
	mksrc "$T/src"
	chown 1234:5678 "$T/src/hello"
	chmod 4750 "$T/src/hello"   # chown cleared the set-user-ID bit
	chown -h 42:43 "$T/src/sub/to-hello"
	touch -d @1600000000 "$T/src/hello"
	touch -a -d @1500000000 "$T/src/hello"
	"$MKFS" -q -d "$T/src" "$T/img" 16M
	run dbg "$T/img" "stat /hello"
	assert_output --partial "Mode:  4750"
	assert_output --regexp "User: +1234 +Group: +5678 "
	assert_output --regexp "mtime: 1600000000\.0+ "
	assert_output --regexp "atime: 1500000000\.0+ "
	run dbg "$T/img" "stat /empty"
	assert_output --partial "Mode:  1777"
	run dbg "$T/img" "stat /sub/to-hello"
	assert_output --regexp "User: +42 +Group: +43 "
	assert_output --partial 'Fast link dest: "../hello"'
	run dbg "$T/img" "stat /sub"
	assert_output --regexp "mtime: 1600000000\.0+ "
}

@test "mkfs -d gives the root directory the source directory's mode, owner and times" {
	require_root
	mkdir "$T/src"
	chmod 0700 "$T/src"
	chown 77:88 "$T/src"
	touch -d @1234567890 "$T/src"
	"$MKFS" -q -d "$T/src" "$T/img" 16M
	run dbg "$T/img" "stat /"
	assert_output --partial "Mode:  0700"
	assert_output --regexp "User: +77 +Group: +88 "
	assert_output --regexp "mtime: 1234567890\.0+ "
}

@test "mkfs -d with -E root_owner keeps that owner for the root" {
	require_root
	mkdir "$T/src"
	chown 77:88 "$T/src"
	"$MKFS" -q -d "$T/src" -E root_owner=1:2 "$T/img" 16M
	run dbg "$T/img" "stat /"
	assert_output --regexp "User: +1 +Group: +2 "
}

@test "mkfs -E root_owner alone gives the root directory to the caller, with -d too" {
	mkdir "$T/src"
	if [ "$(id -u)" -eq 0 ]; then
		chown 77:88 "$T/src"   # so that the source's owner would differ
	fi
	"$MKFS" -q -d "$T/src" -E root_owner "$T/img" 16M
	run dbg "$T/img" "stat /"
	assert_output --regexp "User: +$(id -u) +Group: +$(id -g) "
}

@test "mkfs -d copies device nodes" {
	require_root
	mkdir "$T/src"
	mknod "$T/src/null" c 1 3 || skip "cannot make device nodes here"
	mknod "$T/src/disk" b 8 17
	"$MKFS" -q -d "$T/src" "$T/img" 16M
	run dbg "$T/img" "stat /null"
	assert_output --partial "Type: character device"
	assert_output --partial "Device major/minor number: 1, 3"
	run dbg "$T/img" "stat /disk"
	assert_output --partial "Device major/minor number: 8, 17"
}

@test "mkfs -d skips sockets with a warning that names them" {
	require_cmd python3
	mkdir "$T/src"
	echo keep >"$T/src/file"
	python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$T/src/sock"
	run --separate-stderr "$MKFS" -d "$T/src" "$T/img" 16M
	assert_success
	[[ $stderr == *"warning: $T/src/sock: skipping socket"* ]]
	run dbg "$T/img" "ls /"
	assert_output --partial file
	refute_output --partial sock
}

@test "mkfs -d keeps holes and stores no blocks of zeros" {
	mkdir "$T/src"
	truncate -s 64M "$T/src/sparse"
	printf 'middle' | dd of="$T/src/sparse" bs=1 seek=$((32 << 20)) conv=notrunc status=none
	head -c 8M /dev/zero >"$T/src/zeros"
	printf 'tail' >>"$T/src/zeros"
	# 64 MiB and 8 MiB of file in a 4 MiB image: only holes make that fit
	run "$MKFS" -q -d "$T/src" "$T/img" 4M
	assert_success
	# one data block each, mapped through a double indirect and an indirect block
	run dbg "$T/img" "stat /sparse"
	assert_output --partial "Size: 67108864"
	assert_output --regexp "\(DIND\):[0-9]+, \(IND\):[0-9]+, \(8192\):[0-9]+"
	assert_output --partial "TOTAL: 3"
	run dbg "$T/img" "stat /zeros"
	assert_output --partial "Size: 8388612"
	assert_output --regexp "\(DIND\):[0-9]+, \(IND\):[0-9]+, \(2048\):[0-9]+"
	assert_output --partial "TOTAL: 3"
	cmp <(dbg "$T/img" "cat /sparse") "$T/src/sparse"
	cmp <(dbg "$T/img" "cat /zeros") "$T/src/zeros"
}

@test "mkfs -d copies large files whole" {
	mkdir "$T/src"
	head -c 5000000 /dev/urandom >"$T/src/big"
	"$MKFS" -q -b 1024 -d "$T/src" "$T/img" 16M
	cmp <(dbg "$T/img" "cat /big") "$T/src/big"
}

@test "mkfs -d copies a symlink whose target fills one block, and refuses a longer one" {
	mkdir "$T/src"
	for bs in 1024 2048; do
		rm -f "$T/src/l" "$T/img"
		ln -s "$(printf 'y%.0s' $(seq $bs))" "$T/src/l"
		"$MKFS" -q -b $bs -d "$T/src" "$T/img" 8M
		run "$FSCK" -fn "$T/img"
		assert_success
		rm -rf "$T/out"
		mkdir "$T/out"
		dbg "$T/img" "rdump /l $T/out"
		assert_equal "$(readlink "$T/out/l")" "$(readlink "$T/src/l")"
	done
	rm -f "$T/src/l" "$T/img"
	ln -s "$(printf 'y%.0s' $(seq 1025))" "$T/src/l"
	run "$MKFS" -q -b 1024 -d "$T/src" "$T/img" 8M
	assert_failure 8
	assert_output --partial "$T/src/l: a symlink's target of 1025 bytes is longer than a 1024-byte block"
	[ ! -e "$T/img" ]
}

@test "mkfs -d of a missing directory exits 8 and creates nothing" {
	run "$MKFS" -d "$T/nowhere" "$T/img" 16M
	assert_failure 8
	assert_output --partial "cannot use source directory $T/nowhere: No such file or directory"
	[ ! -e "$T/img" ]
}

@test "mkfs -d follows a symlink given as the source, and no symlink within it" {
	mkdir -p "$T/src/a" "$T/elsewhere"
	echo hi >"$T/src/a/f"
	echo outside >"$T/elsewhere/g"
	ln -s ../elsewhere "$T/src/out"
	ln -s src "$T/lnk"
	run "$MKFS" -q -n -d "$T/lnk" "$T/img" 16M
	assert_success
	run "$MKFS" -q -d "$T/lnk" "$T/img" 16M
	assert_success
	assert_equal "$(dbg "$T/img" "cat /a/f")" hi
	run dbg "$T/img" "stat /out"
	assert_output --partial "Type: symlink"
	run "$FSCK" -fn "$T/img"
	assert_success
}

@test "mkfs -d of a file that is not a directory exits 8" {
	echo x >"$T/file"
	run "$MKFS" -d "$T/file" "$T/img" 16M
	assert_failure 8
	assert_output --partial "source $T/file is not a directory"
	[ ! -e "$T/img" ]
}

@test "mkfs -d names an unreadable source file and leaves no image" {
	require_root
	require_cmd setpriv
	nobody_dir
	mkdir "$N/src" "$N/out"
	echo ok >"$N/src/a"
	echo secret >"$N/src/b"
	chmod 000 "$N/src/b"
	chmod 777 "$N/out"
	run run_as_nobody "$MKFS" -q -d "$N/src" "$N/out/img" 16M
	assert_failure 8
	assert_output --partial "$N/src/b: cannot open: Permission denied"
	[ ! -e "$N/out/img" ]
}

@test "mkfs -d of an unreadable source directory exits 8" {
	require_root
	require_cmd setpriv
	nobody_dir
	mkdir "$N/src" "$N/out"
	chmod 700 "$N/src"
	chmod 777 "$N/out"
	run run_as_nobody "$MKFS" -q -d "$N/src" "$N/out/img" 16M
	assert_failure 8
	assert_output --partial "cannot read source directory $N/src: Permission denied"
	[ ! -e "$N/out/img" ]
}

@test "mkfs -d of a tree larger than the image exits 8 and leaves no file" {
	mkdir "$T/src"
	head -c 3M /dev/urandom >"$T/src/a"
	head -c 3M /dev/urandom >"$T/src/b"
	run "$MKFS" -q -d "$T/src" "$T/img" 4M
	assert_failure 8
	assert_output --partial "$T/src/b: cannot write: No space left on device"
	[ ! -e "$T/img" ]
}

@test "a tree with more files or directories than the image holds is refused before anything is written, with -n too" {
	mkdir "$T/src"
	for i in $(seq 1 300); do mkdir "$T/src/d$i"; done
	# 300 directories need 300 inodes: a 4 MiB image has 256
	run --separate-stderr "$MKFS" -n -d "$T/src" "$T/img" 4M
	assert_failure 8
	assert_equal "$stderr" "mkfs.sufs: $T/src does not fit on $T/img: its files, directories and links need 300 inodes, the file system has 254; use a smaller -i, or -N"
	[ ! -e "$T/img" ]
	# with inodes enough, the directories' blocks do not fit
	run --separate-stderr "$MKFS" -n -N 400 -d "$T/src" "$T/img" 1M
	assert_failure 8
	[[ $stderr == "mkfs.sufs: $T/src does not fit on $T/img: its directories, long symlinks and attribute blocks alone need 300 blocks, the file system has "* ]]
	# an existing file system is left as it was
	"$MKFS" -q "$T/img" 4M
	sum=$(sha "$T/img")
	run "$MKFS" -q -f -d "$T/src" "$T/img"
	assert_failure 8
	[ "$(sha "$T/img")" = "$sum" ]
	# a hard link's names take one inode: 250 files of two names fit
	rm -r "$T/src" && mkdir -p "$T/src/a" "$T/src/b"
	for i in $(seq 1 250); do : >"$T/src/a/f$i"; ln "$T/src/a/f$i" "$T/src/b/f$i"; done
	run "$MKFS" -q -d "$T/src" "$T/img2" 4M
	assert_success
}

@test "mkfs -d onto a host file system that fills up exits 16 and names the image, not the source" {
	require_root
	mkdir "$T/src" "$T/small"
	head -c 7M /dev/urandom >"$T/src/f"
	mount -t tmpfs -o size=2M tmpfs "$T/small" 2>/dev/null || skip "cannot mount a tmpfs here"
	run --separate-stderr "$MKFS" -q -d "$T/src" "$T/small/img" 64M
	ls -A "$T/small" >"$T/left"
	umount "$T/small"
	assert_failure 16
	assert_equal "$stderr" "mkfs.sufs: cannot write $T/small/img: No space left on device
mkfs.sufs: $T/small/img: no file system made"
	assert_equal "$(cat "$T/left")" ""
}

@test "a failed mkfs through a dangling symlink removes the file it made, and keeps the symlink" {
	mkdir "$T/src"
	head -c 6M /dev/urandom >"$T/src/a"
	ln -s made.img "$T/link"
	run "$MKFS" -q -d "$T/src" "$T/link" 4M
	assert_failure 8
	[ -L "$T/link" ]
	[ ! -e "$T/made.img" ]
	run "$MKFS" -q "$T/link" 4M
	assert_success
	[ -L "$T/link" ]
	run "$FSCK" -fn "$T/made.img"
	assert_success
}

@test "a failed populate leaves an existing image that sufs-dump refuses" {
	mkdir "$T/src"
	head -c 6M /dev/urandom >"$T/src/a"
	"$MKFS" -q "$T/img" 4M
	run "$DUMP" -h "$T/img"
	assert_success
	run "$MKFS" -q -f -d "$T/src" "$T/img"
	assert_failure 8
	assert_output --partial "No space left on device"
	[ -e "$T/img" ]
	run "$DUMP" -h "$T/img"
	assert_failure
}

@test "mkfs -d does not copy the image into itself" {
	mkdir "$T/src"
	echo a >"$T/src/a"
	truncate -s 16M "$T/src/img"
	run --separate-stderr "$MKFS" -q -d "$T/src" "$T/src/img"
	assert_success
	[[ $stderr == *"$T/src/img: not copying the image into itself"* ]]
	run dbg "$T/src/img" "ls /"
	refute_output --partial img
}

@test "mkfs -d does not change the source's access times" {
	mksrc "$T/src"
	touch -a -d @1000000000 "$T/src/hello" "$T/src/sub/random" "$T/src/sub"
	"$MKFS" -q -d "$T/src" "$T/img" 16M
	[ "$(stat -c %X "$T/src/hello")" -eq 1000000000 ]
	[ "$(stat -c %X "$T/src/sub/random")" -eq 1000000000 ]
	[ "$(stat -c %X "$T/src/sub")" -eq 1000000000 ]
}

# ---- reproducible images -----------------------------------------------------------

# A tree for the reproducibility tests: mktree when there is one, else mksrc.
mktree_or_src() {
	if [ -n "$MKTREE" ]; then
		"$MKTREE" "$1" --files 400 --seed 7 --max-size 200000 >/dev/null
	else
		mksrc "$1"
	fi
}

@test "SOURCE_DATE_EPOCH makes the same tree give byte-identical images" {
	mktree_or_src "$T/src"
	export SOURCE_DATE_EPOCH=1700000000
	"$MKFS" -q -d "$T/src" "$T/one" 32M
	sleep 1
	"$MKFS" -q -d "$T/src" "$T/two" 32M
	cmp "$T/one" "$T/two"
	run sb "$T/one" "Filesystem created"
	assert_output "2023-11-14 22:13:20 +0000"
}

@test "SOURCE_DATE_EPOCH makes a copy of the tree elsewhere give the same image" {
	mktree_or_src "$T/src"
	cp -a "$T/src" "$T/copy"
	# different inode numbers and creation order than the original
	[ "$(stat -c %i "$T/src")" != "$(stat -c %i "$T/copy")" ]
	# cp read the source and so moved its access times: make them agree again
	find "$T/src" "$T/copy" -exec touch -h -a -d @1800000000 {} +
	export SOURCE_DATE_EPOCH=1700000000
	"$MKFS" -q -d "$T/src" "$T/one" 32M
	"$MKFS" -q -d "$T/copy" "$T/two" 32M
	cmp "$T/one" "$T/two"
}

@test "SOURCE_DATE_EPOCH does not depend on the order names were created in" {
	mkdir "$T/a" "$T/b"
	for n in zeta alpha mid beta; do echo "$n" >"$T/a/$n"; done
	for n in beta mid alpha zeta; do echo "$n" >"$T/b/$n"; done
	touch -d @1600000000 "$T"/a/* "$T"/b/* "$T/a" "$T/b"
	export SOURCE_DATE_EPOCH=1650000000
	"$MKFS" -q -d "$T/a" "$T/one" 16M
	"$MKFS" -q -d "$T/b" "$T/two" 16M
	cmp "$T/one" "$T/two"
}

@test "with -b, a bare SIZE is a number of blocks, as in mke2fs" {
	"$MKFS" -q -b 1024 "$T/a" 8192
	"$MKFS" -q -b 2048 "$T/b" 8192
	[ "$(stat -c %s "$T/a")" -eq $((8 << 20)) ]
	[ "$(stat -c %s "$T/b")" -eq $((16 << 20)) ]
	run "$MKFS" -q -b 4096 "$T/c" 18446744073709551615
	assert_failure 1
	assert_line -n 0 "mkfs.sufs: invalid SIZE '18446744073709551615': too large"
	run "$MKFS" -q -b 4096 "$T/c" 12x
	assert_failure 1
	assert_output --partial "invalid SIZE '12x': a number of blocks (-b), or with a K, M, G or T suffix"
}

@test "mkfs -F forces as mke2fs -F does: it overwrites what -f would" {
	"$MKFS" -q "$T/img" 16M
	run "$MKFS" -q "$T/img"
	assert_failure 2
	assert_output --partial "use -f to overwrite"
	run "$MKFS" -q -F "$T/img"
	assert_success
	run "$FSCK" -fn "$T/img"
	assert_success
}

@test "SOURCE_DATE_EPOCH sets the write time of every superblock copy, and the times of a later -w session" {
	mkdir -p "$T/src/d"
	echo x >"$T/src/d/f"
	SOURCE_DATE_EPOCH=1234567890 "$MKFS" -q -b 1024 -d "$T/src" "$T/img" 32M
	# the primary and the backups of groups 1 and 3 (8192 blocks each)
	for off in 1024 $((8192 * 1024)) $((3 * 8192 * 1024)); do
		run python3 -c 'import struct,sys
f = open(sys.argv[1], "rb"); f.seek(int(sys.argv[2]) + 80)
print(*struct.unpack("<qqq", f.read(24)))' "$T/img" "$off"
		assert_output "1234567890 0 1234567890"
	done
	# a session that honours it dates its open and its close by it too
	SOURCE_DATE_EPOCH=1300000000 "$DEBUG" -w -R "mkdir /e" "$T/img"
	run "$DEBUG" -R super "$T/img"
	assert_line --regexp '^Last opened for writing: +1300000000 '
	assert_line --regexp '^Last written: +1300000000 '
	SOURCE_DATE_EPOCH=1400000000 "$REPLAY" "$T/img" - <<<"mkdir /r"
	run "$DEBUG" -R super "$T/img"
	assert_line --regexp '^Last opened for writing: +1400000000 '
	assert_line --regexp '^Last written: +1400000000 '
}

@test "mkfs -d with 1 KiB blocks refuses a symlink longer than a block, with -n too, and names it" {
	mkdir -p "$T/src/d"
	ln -s "$(printf 'a%.0s' $(seq 1500))" "$T/src/d/long"
	ln -s "$(printf 'b%.0s' $(seq 1024))" "$T/src/full"
	run --separate-stderr "$MKFS" -n -q -b 1024 -d "$T/src" "$T/img" 8M
	assert_failure 8
	assert_equal "$stderr" "mkfs.sufs: $T/src/d/long: a symlink's target of 1500 bytes is longer than a 1024-byte block, the most a symlink holds; use a larger -b"
	run --separate-stderr "$MKFS" -q -b 1024 -d "$T/src" "$T/img" 8M
	assert_failure 8
	assert_equal "$stderr" "mkfs.sufs: $T/src/d/long: a symlink's target of 1500 bytes is longer than a 1024-byte block, the most a symlink holds; use a larger -b"
	[ ! -e "$T/img" ]
	# a target of a whole block is held, and a larger block holds the other
	rm "$T/src/d/long"
	"$MKFS" -q -b 1024 -d "$T/src" "$T/img" 8M
	run "$DEBUG" -R "stat /full" "$T/img"
	assert_output --partial "Size: 1024"
	ln -s "$(printf 'a%.0s' $(seq 1500))" "$T/src/d/long"
	"$MKFS" -q -f -b 2048 -d "$T/src" "$T/img" 8M
	run "$DEBUG" -R "stat /d/long" "$T/img"
	assert_output --partial "Size: 1500"
	run "$FSCK" -fn "$T/img"
	assert_success
}

@test "mkfs -d copies extended attributes; with -O ^xattr it warns once that they are not copied" {
	mkdir -p "$T/src/d"
	echo x >"$T/src/d/f"
	echo y >"$T/src/g"
	python3 -c 'import os,sys
for p in sys.argv[1:]: os.setxattr(p, "user.sufs", b"1")' "$T/src/d" "$T/src/d/f" "$T/src/g" 2>/dev/null ||
		skip "the file system of $T has no user extended attributes"
	run --separate-stderr "$MKFS" -q -d "$T/src" "$T/img" 8M
	assert_success
	assert_equal "$stderr" ""
	run "$DEBUG" -R "ea_get /d/f user.sufs" "$T/img"
	assert_output '"1"'
	run --separate-stderr "$MKFS" -q -f -O ^xattr -d "$T/src" "$T/img" 8M
	assert_success
	assert_equal "$stderr" "mkfs.sufs: warning: $T/src/d: extended attributes not copied: the file system has none (-O ^xattr)"
	# none: nothing said
	rm -rf "$T/src" && mkdir "$T/src" && echo x >"$T/src/f"
	run --separate-stderr "$MKFS" -q -f -d "$T/src" "$T/img" 8M
	assert_success
	assert_equal "$stderr" ""
}

@test "SOURCE_DATE_EPOCH without -d gives identical images and a derived UUID" {
	SOURCE_DATE_EPOCH=1234567890 "$MKFS" -q "$T/one" 16M
	sleep 1
	SOURCE_DATE_EPOCH=1234567890 "$MKFS" -q "$T/two" 16M
	cmp "$T/one" "$T/two"
	SOURCE_DATE_EPOCH=1234567891 "$MKFS" -q "$T/three" 16M
	[ "$(sb "$T/one" "Filesystem UUID")" != "$(sb "$T/three" "Filesystem UUID")" ]
}

@test "SOURCE_DATE_EPOCH derives the UUID from the time, label and layout, not the tree" {
	uuid() { SOURCE_DATE_EPOCH=${E:-1700000000} "$MKFS" "$@" | sed -n 's/^UUID: *//p'; }
	mkdir "$T/a" "$T/b"
	echo one >"$T/a/f"
	base=$(uuid -d "$T/a" "$T/1" 16M)
	[ "$(uuid -d "$T/b" "$T/2" 16M)" = "$base" ]
	[ "$(uuid -n "$T/3" 16M)" = "$base" ]
	for other in "-L x" "-b 1024" "-g 2048" "-i 8192"; do
		# shellcheck disable=SC2086  # the options are words
		[ "$(uuid -n $other "$T/3" 16M)" != "$base" ] || fail "same UUID with $other"
	done
	[ "$(uuid -n "$T/3" 32M)" != "$base" ]
	[ "$(E=1700000001 uuid -n "$T/3" 16M)" != "$base" ]
}

@test "SOURCE_DATE_EPOCH with -U uses the UUID given" {
	SOURCE_DATE_EPOCH=1234567890 "$MKFS" -q -U 0a1b2c3d-4e5f-4a6b-8c7d-8e9fa0b1c2d3 "$T/img" 16M
	run sb "$T/img" "Filesystem UUID"
	assert_output 0a1b2c3d-4e5f-4a6b-8c7d-8e9fa0b1c2d3
}

@test "the EXAMPLES of mkfs.sufs(8) run in order in an empty directory and print what they show" {
	require_cmd git
	require_cmd mkfs.ext4
	export HOME=$T GIT_CONFIG_NOSYSTEM=1
	export GIT_AUTHOR_NAME=bats GIT_AUTHOR_EMAIL=bats@localhost
	export GIT_COMMITTER_NAME=bats GIT_COMMITTER_EMAIL=bats@localhost
	run_examples mkfs.sufs.8
	# the page says the first two UUIDs are random
	v4='s/[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/(random)/'
	diff -u <(sed -E "$v4" "$T/expected") <(sed -E "$v4" "$T/actual")
	[ "$(grep -c '(random)' <(sed -E "$v4" "$T/actual"))" -eq 2 ]
}

@test "SOURCE_DATE_EPOCH clamps later access and modification times to it" {
	mkdir "$T/src"
	echo old >"$T/src/old"
	echo new >"$T/src/new"
	touch -d @1500000000 "$T/src/old"
	touch -d @1900000000 "$T/src/new"
	SOURCE_DATE_EPOCH=1600000000 "$MKFS" -q -d "$T/src" "$T/img" 16M
	run dbg "$T/img" "stat /old"
	assert_output --regexp "mtime: 1500000000\.0+ "
	assert_output --regexp "atime: 1500000000\.0+ "
	assert_output --regexp "ctime: 1600000000\.0+ "
	run dbg "$T/img" "stat /new"
	assert_output --regexp "mtime: 1600000000\.0+ "
	assert_output --regexp "atime: 1600000000\.0+ "
}
