#!/usr/bin/env bats
# A tree copied into an image by `mkfs.sufs -d` and out again by
# `sufs-debug -R "rdump / OUT"` comes back the same: contents, types,
# modes, sizes, mtimes to the nanosecond, owners, link targets, hard-link
# groups, and holes.

load helper

bats_require_minimum_version 1.5.0

# The trees hold a directory without write permission: let bats clean up.
teardown() {
	chmod -R u+w "$T" 2>/dev/null || true
}

# meta_list DIR [owner]: one line per entry below DIR (sockets left out:
# mkfs does not copy them): type, mode, size (not for directories: that
# depends on the file system), mtime with nanoseconds, owner and group if
# asked, link target, path.
meta_list() {
	local fmt='%y %m %s %T@%O %p -> %l\n' dfmt='%y %m - %T@%O %p\n' owner=
	[ "${2:-}" = owner ] && owner=' %U:%G'
	fmt=${fmt/\%O/$owner}
	dfmt=${dfmt/\%O/$owner}
	(cd "$1" && find . -mindepth 1 ! -type s \( -type d -printf "$dfmt" -o -printf "$fmt" \)) |
		LC_ALL=C sort
}

# link_groups DIR: the paths of each multiply linked inode, one group a line.
link_groups() {
	(cd "$1" && find . -mindepth 1 ! -type d -links +1 -printf '%i %p\n') |
		LC_ALL=C sort -k2 |
		awk '{ i = $1; sub(/^[^ ]+ /, ""); g[i] = g[i] "|" $0 } END { for (i in g) print g[i] }' |
		LC_ALL=C sort
}

# roundtrip SRC IMG [owner]: rdump IMG into a fresh directory and compare.
roundtrip() {
	local src=$1 img=$2 owner=${3:-} out=$T/out
	rm -rf "$out"
	mkdir "$out"
	run --separate-stderr "$DEBUG" -R "rdump / $out" "$img"
	[ -z "$stderr" ] || echo "$stderr"
	assert_success
	diff -r --no-dereference --exclude='special-*' "$src" "$out"
	diff <(meta_list "$src" "$owner") <(meta_list "$out" "$owner")
	diff <(link_groups "$src") <(link_groups "$out")
	[ -n "$(meta_list "$src")" ]
}

@test "every kind of file comes back the same" {
	local src=$T/src i name deep
	mkdir -p "$src/dir/sub"
	printf 'plain text\n' >"$src/regular"
	: >"$src/empty"
	head -c 100000 /dev/urandom >"$src/dir/random"
	ln -s regular "$src/short-link"
	ln -s "../$(printf 'x%.0s' $(seq 200))/target" "$src/dir/long-link"
	ln -s "/nowhere/at/all" "$src/dangling"
	printf 'three names\n' >"$src/hard1"
	ln "$src/hard1" "$src/dir/hard2"
	ln "$src/hard1" "$src/dir/sub/hard3"
	mkfifo "$src/special-fifo"
	if [ "$(id -u)" -eq 0 ]; then
		mknod "$src/special-chr" c 1 3
		mknod "$src/special-blk" b 7 99
		chown 1234:5678 "$src/regular"
		chown -h 4321:8765 "$src/short-link"
	fi

	# holes: data after a 1 MiB hole, and a hole at the end
	dd if=/dev/urandom of="$src/sparse" bs=4096 count=1 seek=256 status=none
	printf 'head' >"$src/tail-hole"
	truncate -s 3M "$src/tail-hole"

	# long names and deep paths
	name=$(printf 'n%.0s' $(seq 255))
	printf 'long name\n' >"$src/$name"
	mkdir "$src/$(printf 'd%.0s' $(seq 255))"
	deep=$src/deep
	for i in $(seq 30); do
		deep=$deep/level$i
	done
	mkdir -p "$deep"
	printf 'at the bottom\n' >"$deep/file"

	# odd modes
	printf '#!/bin/sh\n' >"$src/setuid"
	chmod 4755 "$src/setuid"
	printf 'g\n' >"$src/setgid-noexec"
	chmod 2644 "$src/setgid-noexec"
	mkdir "$src/sticky" "$src/setgid-dir" "$src/locked-dir"
	chmod 1777 "$src/sticky"
	chmod 2750 "$src/setgid-dir"
	printf 'inside\n' >"$src/locked-dir/file"
	chmod 0500 "$src/locked-dir"
	if [ "$(id -u)" -eq 0 ]; then
		printf 'nobody may read this\n' >"$src/mode-0000"
		chmod 0000 "$src/mode-0000"
	fi

	# mtimes with nanoseconds, on files, links and directories
	touch -d '2001-02-03 04:05:06.123456789' "$src/regular"
	touch -h -d '1999-12-31 23:59:59.999999999' "$src/short-link"
	touch -d '2038-01-19 03:14:08.000000001' "$src/empty"
	find "$src" -type d -exec touch -d '2010-10-10 10:10:10.101010101' {} +

	# a socket: mkfs leaves it out, with a warning
	if command -v python3 >/dev/null; then
		python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' \
			"$src/special-sock"
	fi

	run --separate-stderr "$MKFS" "$T/img" 64M -d "$src"
	assert_success
	if [ -S "$src/special-sock" ]; then
		[[ $stderr == *special-sock* ]]
	fi
	roundtrip "$src" "$T/img" owner
	[ ! -e "$T/out/special-sock" ]

	# the copy of the sparse files is sparse too
	[ "$(stat -c %b "$T/out/sparse")" -le $(($(stat -c %b "$src/sparse") + 8)) ]
	[ "$(stat -c %b "$T/out/tail-hole")" -le 8 ]
	[ "$(stat -c %s "$T/out/tail-hole")" -eq $((3 << 20)) ]
	# the fast and the slow symlink are both there
	"$DEBUG" -R "stat short-link" "$T/img" | grep -q '^Fast link dest: "regular"$'
	"$DEBUG" -R "stat dir/long-link" "$T/img" | grep -q '^BLOCKS:$'
}

@test "a file that needs a triple indirect block comes back the same" {
	local src=$T/src
	mkdir "$src"
	# with 1 KiB blocks, 12 + 128 + 128 * 128 blocks = 16524 KiB fit below the
	# triple indirect block: a byte at 20 MiB needs it
	printf 'the start of a big file' >"$src/big"
	printf 'z' | dd of="$src/big" bs=1 seek=$((20 << 20)) conv=notrunc status=none
	mkimg "$T/img" 16M -b 1024 -d "$src"
	"$DEBUG" -R "stat big" "$T/img" | grep -q '(TIND)'
	roundtrip "$src" "$T/img" owner
	[ "$(stat -c %b "$T/out/big")" -le $(($(stat -c %b "$src/big") + 16)) ]
}

@test "/usr/include comes back the same" {
	[ -d /usr/include ] || skip "no /usr/include"
	local owner=
	[ "$(id -u)" -eq 0 ] && owner=owner
	mkimg "$T/img" 512M -d /usr/include
	roundtrip /usr/include "$T/img" $owner
}

@test "a 2000-file mktree tree comes back the same" {
	require_mktree
	"$MKTREE" "$T/src" --files 2000 --seed 11 --max-size 1048576 >/dev/null
	mkimg "$T/img" 256M -d "$T/src"
	roundtrip "$T/src" "$T/img" owner
}
