#!/usr/bin/env bats
# sufs-debug: every command through -R and -f, exit statuses and messages,
# the <INO> syntax, and rdump's promise never to write outside HOSTDIR.

load helper

bats_require_minimum_version 1.5.0

# One image for the tests that only read: a tree with a bit of everything.
setup_file() {
	export TZ=UTC
	export SRC=$BATS_FILE_TMPDIR/src IMG=$BATS_FILE_TMPDIR/fixture.img
	mkdir -p "$SRC/dir/sub"
	printf 'hello, world\n' >"$SRC/hello.txt"
	: >"$SRC/empty"
	printf 'deep\n' >"$SRC/dir/sub/deep.txt"
	ln -s ../hello.txt "$SRC/dir/link"
	ln "$SRC/hello.txt" "$SRC/dir/hard"
	printf 'x' | dd of="$SRC/sparse" bs=1 seek=1048576 status=none
	printf 'spaced\n' >"$SRC/with space"
	printf 'tabbed\n' >"$SRC/$(printf 'tab\there')"
	printf 'not utf-8\n' >"$SRC/$(printf 'bad\377name')"
	mkfifo "$SRC/fifo"
	touch -d '2021-05-06 07:08:09.123456789' "$SRC/hello.txt"
	mkimg "$IMG" 16M -d "$SRC"
}

# debug IMG COMMAND: run one command with -R, stdout and stderr apart
debug() {
	run --separate-stderr "$DEBUG" -R "$2" "$1"
}

ino_of() {
	"$DEBUG" -R "stat $1" "$IMG" | awk 'NR == 1 { print $2 }'
}

# patch_dirent IMG DIR OLD NEW [INO]: rename the entry OLD of directory DIR
# to NEW (same length) and optionally point it at inode INO, directly in the
# image, resealing the block's checksum (man/sufs.5: entries are ino u32,
# reclen u16, namelen u8, ftype u8, name; the block ends with "TAIL" and a
# CRC-32 of the block number and the block).  The API refuses such names,
# so this is how a damaged or hostile image is made.
patch_dirent() {
	local img=$1 dir=$2 old=$3 new=$4 ino=${5:-} bs blk
	require_cmd python3
	bs=$("$DEBUG" -R super "$img" | awk '/^Block size:/ { print $3 }')
	blk=$("$DEBUG" -R "blocks $dir" "$img" | awk '{ print $1 }')
	python3 - "$img" "$bs" "$blk" "$old" "$new" "$ino" <<'EOF'
import struct, sys, zlib
img, bs, blk = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
old, new, ino = sys.argv[4].encode(), sys.argv[5].encode(), sys.argv[6]
assert len(old) == len(new)
with open(img, "r+b") as f:
    f.seek(blk * bs)
    b = bytearray(f.read(bs))
    off = 0
    while off < bs - 8:
        dino, reclen, nlen, ftype = struct.unpack_from("<IHBB", b, off)
        if dino and bytes(b[off + 8:off + 8 + nlen]) == old:
            break
        off += reclen
    else:
        sys.exit("patch_dirent: no entry %r" % old)
    b[off + 8:off + 8 + nlen] = new
    if ino:
        struct.pack_into("<I", b, off, int(ino))
    seed = zlib.crc32(struct.pack("<Q", blk))
    struct.pack_into("<I", b, bs - 4, zlib.crc32(bytes(b[:bs - 4]), seed))
    f.seek(blk * bs)
    f.write(b)
EOF
}

# small_img IMG: a small image for a test to damage with sufs-debug -w: a
# file /f of 100000 bytes (indirect block included), a directory /d with
# /d/sub/x, symlinks /sl -> f and /sl2 -> ffff, a fifo /fifo; inode
# numbers are those of sufs-replay's order: d 3, f 4, sl 5, sl2 6, fifo 7.
small_img() {
	mkimg "$1" 4M
	"$REPLAY" "$1" - <<'EOF'
mkdir /d
create /f
write /f 0 100000 1
symlink f /sl
symlink ffff /sl2
mknod /fifo p
mkdir /d/sub
create /d/sub/x
write /d/sub/x 0 5 2
EOF
}

# edit IMG: run the editing commands of standard input with -w
edit() { "$DEBUG" -w -f - "$1"; }

# ---------------------------------------------------------------------------
# Options and exit statuses

@test "--help prints the usage and exits 0" {
	run "$DEBUG" --help
	assert_success
	assert_output --partial "Usage: sufs-debug [-w | -c] [-s BLOCK] [-R COMMAND | -f CMDFILE|-] IMAGE"
	assert_output --partial "See sufs-debug(8)."
}

@test "--version prints the program and library version" {
	run "$DEBUG" --version
	assert_success
	assert_output --regexp '^sufs-debug \(sufs\) [0-9]+\.[0-9]+'
}

@test "usage errors exit 1" {
	run "$DEBUG"
	assert_failure 1
	assert_output --partial "no image given"
	run "$DEBUG" "$IMG" "$IMG"
	assert_failure 1
	run "$DEBUG" --frobnicate "$IMG"
	assert_failure 1
	run "$DEBUG" -R ls -f - "$IMG"
	assert_failure 1
	assert_output --partial "-R and -f cannot be used together"
	run "$DEBUG" -f "$T/no-such-file" "$IMG"
	assert_failure 8
	assert_output --partial "$T/no-such-file"
	run "$DEBUG" -R ls -R pwd "$IMG"
	assert_failure 1
	assert_output "sufs-debug: -R may be given once"
	run "$DEBUG" -f "$T/a" -f "$T/b" "$IMG"
	assert_failure 1
	assert_output "sufs-debug: -f may be given once"
}

@test "a command file that is a directory cannot be used (exit 8), and the image is not opened" {
	cp "$IMG" "$T/rw.img"
	before=$(sha "$T/rw.img")
	run "$DEBUG" -w -f "$T" "$T/rw.img"
	assert_failure 8
	assert_output "sufs-debug: $T: Is a directory"
	run "$DEBUG" -w -f - "$T/rw.img" <"$T"
	assert_failure 8
	assert_output "sufs-debug: -: Is a directory"
	[ "$(sha "$T/rw.img")" = "$before" ]
}

@test "a command whose output cannot be written fails, and so does the run" {
	[ -w /dev/full ] || skip "no /dev/full"
	run --separate-stderr bash -c "'$DEBUG' -R ls '$IMG' >/dev/full"
	assert_failure 4
	# said once: not again when the run ends
	[ "$stderr" = "sufs-debug: ls: writing the output: No space left on device" ]
	printf 'super\nls\n' >"$T/cmds"
	run --separate-stderr bash -c "'$DEBUG' -f '$T/cmds' '$IMG' >/dev/full"
	assert_failure 4
	[ "$stderr" = "sufs-debug: super: writing the output: No space left on device
sufs-debug: ls: writing the output: No space left on device" ]
}

@test "an image that cannot be opened exits 2 and says why" {
	run --separate-stderr "$DEBUG" -R ls "$T/missing.img"
	assert_failure 2
	[[ $stderr == "sufs-debug: cannot open $T/missing.img: "* ]]
	truncate -s 16M "$T/zeros.img"
	run --separate-stderr "$DEBUG" -R ls "$T/zeros.img"
	assert_failure 2
	[[ $stderr == *"cannot open $T/zeros.img"* ]]
}

@test "a damaged superblock exits 2 and is named" {
	cp "$IMG" "$T/bad.img"
	# one byte of the label: still a sufs magic, but the checksum fails
	printf 'X' | dd of="$T/bad.img" bs=1 seek=$((1024 + 200)) conv=notrunc status=none
	run --separate-stderr "$DEBUG" -R super "$T/bad.img"
	assert_failure 2
	[[ $stderr == *"cannot open $T/bad.img"* ]]
	[[ $stderr == *superblock* ]]
}

@test "-R exits with the status of its command" {
	debug "$IMG" "cat hello.txt"
	assert_success
	assert_output "hello, world"
	debug "$IMG" "cat /no/such/file"
	assert_failure 4
	[ "$stderr" = "sufs-debug: cat /no/such/file: No such file or directory" ]
}

@test "an unknown command fails with a message" {
	debug "$IMG" "frobnicate now"
	assert_failure 4
	[ "$stderr" = "sufs-debug: frobnicate: unknown command (try help)" ]
}

@test "a command with the wrong arguments prints its usage and fails" {
	debug "$IMG" "bmap hello.txt"
	assert_failure 4
	[ "$stderr" = "sufs-debug: bmap: usage: bmap PATH LBLK" ]
	debug "$IMG" "ls -z"
	assert_failure 4
	[[ $stderr == *"unknown option -z"* ]]
}

@test "-f runs every command and exits 4 if any failed" {
	cat >"$T/cmds" <<-'EOF'
	# a comment, then a blank line

	cat hello.txt
	cat nothing-here
	cat dir/sub/deep.txt
	EOF
	run --separate-stderr "$DEBUG" -f "$T/cmds" "$IMG"
	assert_failure 4
	assert_output "$(printf 'hello, world\ndeep')"
	[ "$stderr" = "sufs-debug: cat nothing-here: No such file or directory" ]
}

@test "-f succeeds when every command does" {
	printf 'cd dir\ncat link\npwd\n' >"$T/cmds"
	run "$DEBUG" -f "$T/cmds" "$IMG"
	assert_success
	assert_output "$(printf 'hello, world\n/dir')"
}

@test "-f - reads the commands from standard input" {
	run bash -c "printf 'cd dir/sub\npwd\ncat deep.txt\n' | '$DEBUG' -f - '$IMG'"
	assert_success
	assert_output "$(printf '/dir/sub\ndeep')"
}

@test "commands piped in without -f run as with -f -" {
	run bash -c "printf 'pwd\nls nothing\npwd\n' | '$DEBUG' '$IMG'"
	assert_failure 4
	assert_line --index 0 "/"
	assert_line --index 1 "sufs-debug: ls nothing: No such file or directory"
	assert_line --index 2 "/"
}

@test "quit stops reading commands" {
	printf 'pwd\nquit\ncat nothing-here\n' >"$T/cmds"
	run "$DEBUG" -f "$T/cmds" "$IMG"
	assert_success
	assert_output "/"
}

@test "the prompt reads commands with readline when standard input is a terminal" {
	require_cmd script
	run bash -c "printf 'cd dir\npwd\nquit\n' | SUFS_DEBUG_HISTORY='$T/history' script -qec \"'$DEBUG' '$IMG'\" /dev/null"
	assert_success
	# the prompt names the image and the current directory
	assert_output --partial "sufs-debug $(basename "$IMG"):/> cd dir"
	assert_output --partial "sufs-debug $(basename "$IMG"):/dir> pwd"
	assert_output --partial "/dir"
}

@test "help lists every command, and describes one" {
	debug "$IMG" help
	assert_success
	for c in help quit ls cd pwd stat cat dump rdump blocks bmap icheck ncheck super groups; do
		assert_line --regexp "^  $c "
	done
	debug "$IMG" "help ls"
	assert_success
	assert_line --index 0 "ls [-l] [PATH]"
	assert_output --partial "also called: list_directory"
	debug "$IMG" "help nothing"
	assert_failure 4
	debug "$IMG" "help quit"
	assert_success
	assert_line --index 0 "quit"
}

@test "a command without arguments given some prints its usage, without a trailing blank" {
	for c in quit pwd super groups; do
		debug "$IMG" "$c extra"
		assert_failure 4
		[ "$stderr" = "sufs-debug: $c: usage: $c" ] || fail "$c: '$stderr'"
	done
	for c in "ls a b" "cd a b" "stat" "blocks" "cat" "dump f" "icheck" "ncheck" "rdump $T"; do
		debug "$IMG" "$c"
		assert_failure 4
		[[ $stderr == "sufs-debug: ${c%% *}: usage: ${c%% *} "?* ]] || fail "$c: '$stderr'"
	done
}

# ---------------------------------------------------------------------------
# Commands

@test "ls lists the names of a directory, . and .. included" {
	debug "$IMG" "ls /"
	assert_success
	expected=$(printf '%s\n' . .. 'bad\xffname' dir empty fifo hello.txt sparse 'tab\there' \
		'with space' | LC_ALL=C sort)
	[ "$(printf '%s\n' "$output" | LC_ALL=C sort)" = "$expected" ]
}

@test "ls -l shows inode, mode, links, owner, size, mtime and name" {
	debug "$IMG" "ls -l"
	assert_success
	ino=$(ino_of hello.txt)
	assert_line --regexp "^ +$ino -rw-r--r-- +2 +$(id -u) +$(id -g) +13 2021-05-06 07:08 hello.txt\$"
	assert_line --regexp "^ +[0-9]+ drwxr-xr-x +3 .* dir\$"
	assert_line --regexp "^ +[0-9]+ prw-r--r-- +1 .* 0 .* fifo\$"
	debug "$IMG" "ls -l dir"
	assert_line --regexp "^ +[0-9]+ lrwxrwxrwx +1 .* 12 .* link -> \.\./hello\.txt\$"
	debug "$IMG" "ls -l hello.txt"
	assert_success
	assert_output --regexp "^ +$ino -rw-r--r-- .* hello\.txt\$"
}

@test "ls of a missing directory fails and names it" {
	debug "$IMG" "ls -l /nowhere"
	assert_failure 4
	[ "$stderr" = "sufs-debug: ls /nowhere: No such file or directory" ]
}

@test "names with unprintable bytes are shown escaped and can be typed back" {
	debug "$IMG" "ls"
	assert_line 'tab\there'
	assert_line 'bad\xffname'
	debug "$IMG" 'cat tab\there'
	assert_success
	assert_output "tabbed"
	debug "$IMG" 'cat "bad\xffname"'
	assert_success
	assert_output "not utf-8"
}

@test "messages write the control bytes of typed words with escapes, never raw" {
	debug "$IMG" $'bo\x1b[31mgus'
	assert_failure 4
	[ "$stderr" = 'sufs-debug: bo\x1b[31mgus: unknown command (try help)' ]
	debug "$IMG" 'stat "/d/x\x1bz"'
	assert_failure 4
	[ "$stderr" = 'sufs-debug: stat /d/x\x1bz: No such file or directory' ]
	debug "$IMG" $'help fo\ao'
	assert_failure 4
	[ "$stderr" = 'sufs-debug: help fo\x07o: no such command' ]
	# a line that cannot be split is quoted whole, a backslash doubled
	debug "$IMG" $'cat "\x1b'
	assert_failure 4
	[ "$stderr" = 'sufs-debug: unterminated quote: cat "\x1b' ]
	debug "$IMG" $'ls \x1b\\'
	assert_failure 4
	[ "$stderr" = 'sufs-debug: a backslash ends the line: ls \x1b\\' ]
}

@test "messages and deps name a file of the image with escapes" {
	cp "$IMG" "$T/w.img"
	run --separate-stderr "$DEBUG" -w -f - "$T/w.img" <<'EOF'
mkdir "/d\x1by"
create "/d\x1by/h\x1bi"
truncate "/d\x1by/h\x1bi" 8192
deps "/d\x1by/h\x1bi"
set_dirent "/d\x1by" nope inode 1
zap_block -f "/d\x1by/h\x1bi" 1
EOF
	assert_failure 4
	assert_line --regexp '^[0-9]+ updates? pending on /d\\x1by/h\\x1bi \(inode [0-9]+, its blocks\)'
	assert_equal "$stderr" 'sufs-debug: set_dirent nope: no such entry in /d\x1by
sufs-debug: zap_block 1: a hole in /d\x1by/h\x1bi: no block to zap'
	[[ $output != *$'\e'* ]]
	# rdump names the entry it could not copy the same way
	mkdir "$T/out"
	: >"$T/out/"$'d\ey'
	run --separate-stderr "$DEBUG" -R "rdump / $T/out" "$T/w.img"
	assert_failure 4
	[[ $stderr == *'sufs-debug: rdump /d\x1by: File exists'* ]]
	[[ $stderr != *$'\e'* ]]
}

@test "the prompt writes the current directory's names with escapes" {
	require_cmd script
	cp "$IMG" "$T/w.img"
	"$DEBUG" -w -R 'mkdir "/d\x1by"' "$T/w.img"
	printf '%s\n' 'cd "d\x1by"' pwd quit >"$T/cmds"
	run bash -c "SUFS_DEBUG_HISTORY= script -qec \"'$DEBUG' '$T/w.img'\" /dev/null <'$T/cmds'"
	assert_success
	assert_output --partial 'sufs-debug w.img:/d\x1by> pwd'
	refute_output --partial $'/d\ey>'   # (readline writes escapes of its own)
}

@test "quotes and backslashes protect spaces" {
	debug "$IMG" 'cat "with space"'
	assert_output "spaced"
	debug "$IMG" "cat 'with space'"
	assert_output "spaced"
	debug "$IMG" 'cat with\ space'
	assert_output "spaced"
	debug "$IMG" 'cat "with space'
	assert_failure 4
	[[ $stderr == *"unterminated quote"* ]]
}

@test "cd and pwd move around; cd to a file fails" {
	printf 'pwd\ncd dir/sub\npwd\ncd ..\npwd\ncd\npwd\n' >"$T/cmds"
	run "$DEBUG" -f "$T/cmds" "$IMG"
	assert_success
	assert_output "$(printf '/\n/dir/sub\n/dir\n/')"
	debug "$IMG" "cd hello.txt"
	assert_failure 4
	[ "$stderr" = "sufs-debug: cd hello.txt: Not a directory" ]
}

@test "stat shows every field of an inode" {
	debug "$IMG" "stat hello.txt"
	assert_success
	ino=$(ino_of hello.txt)
	sec=$(date -u -d '2021-05-06 07:08:09' +%s)
	assert_line --regexp "^Inode: $ino +Type: regular file +Mode: +0644 +Flags: 0x[0-9a-f]+\$"
	assert_line --regexp '^Generation: [0-9]+$'
	assert_line --regexp "^User: +$(id -u) +Group: +$(id -g) +Size: 13\$"
	assert_line --regexp '^Links: 2 +Blockcount: 1$'
	assert_line " mtime: $sec.123456789 -- Thu May  6 07:08:09 2021"
	assert_line --regexp '^ +ctime: [0-9]+\.[0-9]{9} -- '
	assert_line --regexp '^ +atime: [0-9]+\.[0-9]{9} -- '
	assert_line --regexp '^crtime: [0-9]+\.[0-9]{9} -- '
	assert_line --regexp '^Inode checksum: 0x[0-9a-f]{8}$'
	assert_line "BLOCKS:"
	assert_line --regexp '^\(0\):[0-9]+$'
	assert_line "TOTAL: 1"
}

@test "stat shows a fast symlink's target, and does not follow it" {
	debug "$IMG" "stat dir/link"
	assert_success
	assert_line --regexp '^Inode: [0-9]+ +Type: symlink '
	assert_line 'Fast link dest: "../hello.txt"'
}

@test "ls -l shows what it can of damaged entries, with ? for the rest, and fails" {
	small_img "$T/s.img"
	edit "$T/s.img" <<'EOF'
set_dirent / fifo inode 10
sif f mode 0170644
sif sl mtime 0x7fffffffffffffff
sif sl2 size 200
sif sl2 block[0] 99999
EOF
	debug "$T/s.img" "ls -l"
	assert_failure 4
	assert_line --regexp '^ +4 \?rw-r--r-- +1 .* 100000 [0-9-]+ [0-9:]+ f$'
	assert_line --regexp '^ +5 lrwxrwxrwx +1 .* 1 \(invalid time\) sl -> f$'
	assert_line --regexp '^ +6 lrwxrwxrwx +1 .* 200 [0-9-]+ [0-9:]+ sl2 -> \?$'
	assert_line --regexp '^ +10 \? +\? +\? +\? +\? \? +fifo$'
	assert_line --regexp '^ +3 drwxr-xr-x .* d$'
	[ "$stderr" = "$(printf '%s\n' \
		"sufs-debug: ls sl2: inode 6: reading the link: corrupt metadata" \
		"sufs-debug: ls fifo: inode 10: No such file or directory")" ]
}

@test "stat shows a time out of range as invalid, and a socket's type" {
	small_img "$T/s.img"
	edit "$T/s.img" <<'EOF'
sif f mtime 0x7fffffffffffffff
mknod /s s
EOF
	debug "$T/s.img" "stat f"
	assert_success
	assert_line --regexp '^ mtime: 9223372036854775807\.[0-9]{9} -- \(invalid\)$'
	debug "$T/s.img" "stat s"
	assert_success
	assert_line --index 0 --regexp '^Inode: [0-9]+ +Type: socket +Mode: +0644 '
}

@test "ls of a directory whose block is damaged fails, and so do ncheck and rdump" {
	small_img "$T/s.img"
	edit "$T/s.img" <<<"set_dirent d sub rec_len 3"
	debug "$T/s.img" "ls d"
	assert_failure 4
	[ "$stderr" = "sufs-debug: ls d: corrupt metadata" ]
	debug "$T/s.img" "ncheck 4"
	assert_failure 4
	assert_line "$(printf '4\t/f')"
	[ "$stderr" = "sufs-debug: ncheck /d: corrupt metadata" ]
	mkdir "$T/out"
	debug "$T/s.img" "rdump / $T/out"
	assert_failure 4
	[ "$stderr" = "sufs-debug: rdump /d: reading the directory: corrupt metadata" ]
	[ -d "$T/out/d" ] && [ -z "$(ls -A "$T/out/d")" ]
	cmp <("$DEBUG" -R "cat f" "$T/s.img") "$T/out/f"
}

@test "pwd names a directory its parent does not list as <INO>, and the path goes on from there" {
	small_img "$T/s.img"
	edit "$T/s.img" <<<"set_dirent / d inode 7"
	printf 'cd <3>\npwd\ncd sub\npwd\ncd ..\npwd\n' >"$T/cmds"
	run "$DEBUG" -f "$T/cmds" "$T/s.img"
	assert_success
	assert_output "$(printf '<3>\n<3>/sub\n<3>')"
	# what pwd prints can be typed back
	printf 'cd <3>/sub\npwd\n' >"$T/cmds"
	run "$DEBUG" -f "$T/cmds" "$T/s.img"
	assert_output "<3>/sub"
}

@test "stat of a sparse file shows its indirect block" {
	debug "$IMG" "stat sparse"
	assert_success
	assert_line --regexp '^\(IND\):[0-9]+, \(256\):[0-9]+$'
	assert_line "TOTAL: 2"
}

@test "stat still shows an inode whose checksum fails; cat refuses it" {
	cp "$IMG" "$T/inode.img"
	ino=$(ino_of hello.txt)
	blk=$("$DEBUG" -R "blocks hello.txt" "$IMG")
	bs=$("$DEBUG" -R super "$IMG" | awk '/^Block size:/ { print $3 }')
	itable=$("$DEBUG" -R groups "$IMG" | awk 'NR == 2 { print $6 }')
	# change the owner (bytes 8-11 of the inode, man/sufs.5) behind the checksum's back
	printf '\x63\x00\x00\x00' | dd of="$T/inode.img" bs=1 conv=notrunc status=none \
		seek=$((itable * bs + (ino - 1) * 256 + 8))
	debug "$T/inode.img" "stat hello.txt"
	assert_success
	assert_line --regexp '^User: +99 '
	assert_line --regexp '^Inode checksum: 0x[0-9a-f]{8} \(does not match\)$'
	assert_line "Block pointers (not followed): $blk 0 0 0 0 0 0 0 0 0 0 0 0 0 0"
	[ "$stderr" = "sufs-debug: stat hello.txt: warning: the inode's checksum does not match its contents" ]
	debug "$T/inode.img" "cat hello.txt"
	assert_failure 4
	[[ $stderr == "sufs-debug: cat hello.txt: "* ]]
}

@test "blocks and bmap agree, and a hole maps to 0" {
	debug "$IMG" "blocks sparse"
	assert_success
	data=$output
	debug "$IMG" "bmap sparse 256"
	assert_success
	assert_output "$data"
	debug "$IMG" "bmap sparse 3"
	assert_success
	assert_output "0"
	debug "$IMG" "bmap sparse x"
	assert_failure 4
	[ "$stderr" = "sufs-debug: bmap x: not a block number" ]
}

@test "cat writes a file's bytes, holes as zeros" {
	run bash -c "'$DEBUG' -R 'cat sparse' '$IMG' | cmp - '$SRC/sparse'"
	assert_success
	debug "$IMG" "cat empty"
	assert_success
	assert_output ""
}

@test "cat, dump and rdump refuse a file whose size is past the largest file, at once" {
	cp "$IMG" "$T/big.img"
	"$DEBUG" -w -R "set_inode_field sparse size 18446744073709551615" "$T/big.img"
	for c in "cat sparse" "dump sparse $T/out" "rdump sparse $T"; do
		run --separate-stderr timeout 20 "$DEBUG" -R "$c" "$T/big.img"
		assert_failure 4
		[[ $stderr == "sufs-debug: ${c%% *} "*"corrupt metadata"* ]] || fail "$c: $stderr"
	done
}

@test "dump copies a file and keeps its holes; -p keeps its metadata" {
	debug "$IMG" "dump sparse $T/sparse.out"
	assert_success
	cmp "$SRC/sparse" "$T/sparse.out"
	[ "$(stat -c %b "$T/sparse.out")" -lt 64 ]
	debug "$IMG" "dump -p hello.txt $T/hello.out"
	assert_success
	cmp "$SRC/hello.txt" "$T/hello.out"
	[ "$(stat -c '%a %Y %y' "$T/hello.out")" = "$(stat -c '%a %Y %y' "$SRC/hello.txt")" ]
	debug "$IMG" "dump fifo $T/fifo.out"
	assert_failure 4
	[[ $stderr == "sufs-debug: dump fifo: "* ]]
}

@test "dump to a pipe or a device streams the bytes, holes as zeros; a full device is an error" {
	"$DEBUG" -R "dump sparse /dev/stdout" "$IMG" | cmp - "$SRC/sparse"
	"$DEBUG" -R "dump hello.txt /dev/stdout" "$IMG" | cmp - "$SRC/hello.txt"
	[ "$("$DEBUG" -R "dump empty /dev/stdout" "$IMG" | wc -c)" -eq 0 ]
	[ -w /dev/full ] || skip "no /dev/full"
	debug "$IMG" "dump sparse /dev/full"
	assert_failure 4
	[ "$stderr" = "sufs-debug: dump sparse: writing the copy: No space left on device" ]
}

@test "dump and rdump of a file with a block pointer out of range copy the rest, leave a hole and fail" {
	mkdir "$T/s" "$T/out"
	head -c 20000 /dev/urandom >"$T/s/f"
	mkimg "$T/bad.img" 16M -d "$T/s"
	"$DEBUG" -w -R "set_inode_field /f block[2] 99999999" "$T/bad.img"
	head -c 8192 "$T/s/f" >"$T/want"
	head -c 4096 /dev/zero >>"$T/want"
	tail -c +12289 "$T/s/f" >>"$T/want"
	debug "$T/bad.img" "dump /f $T/f.out"
	assert_failure 4
	assert_equal "$stderr" "sufs-debug: dump /f: a block pointer out of range at logical block 2 (left as a hole)"
	cmp "$T/want" "$T/f.out"
	debug "$T/bad.img" "rdump / $T/out"
	assert_failure 4
	assert_equal "$stderr" "sufs-debug: rdump /f: a block pointer out of range at logical block 2 (left as a hole)"
	cmp "$T/want" "$T/out/f"
}

@test "an indirect block's pointer out of range: dump and rdump leave what it maps as a hole and fail" {
	small_img "$T/s.img"
	"$DEBUG" -R "cat f" "$T/s.img" >"$T/whole"
	edit "$T/s.img" <<<"sif f block[IND] 99999"
	head -c 49152 "$T/whole" >"$T/want"
	head -c $((100000 - 49152)) /dev/zero >>"$T/want"
	debug "$T/s.img" "dump f $T/f.out"
	assert_failure 4
	assert_equal "$stderr" "sufs-debug: dump f: a block pointer out of range at logical block 12 (left as a hole)"
	cmp "$T/want" "$T/f.out"
	mkdir "$T/out"
	debug "$T/s.img" "rdump f $T/out"
	assert_failure 4
	assert_equal "$stderr" "sufs-debug: rdump f: a block pointer out of range at logical block 12 (left as a hole)"
	cmp "$T/want" "$T/out/f"
}

@test "blocks leaves out a block pointer out of range and fails, as bmap does" {
	small_img "$T/s.img"
	all=$("$DEBUG" -R "blocks f" "$T/s.img")
	read -r -a b <<<"$all"
	[ "${#b[@]}" -eq 25 ]
	edit "$T/s.img" <<<"sif f block[1] 99999"
	debug "$T/s.img" "blocks f"
	assert_failure 4
	assert_output "${b[0]} ${b[*]:2}"
	[ "$stderr" = "sufs-debug: blocks f: a block pointer out of range at logical block 1" ]
	debug "$T/s.img" "bmap f 1"
	assert_failure 4
	[ "$stderr" = "sufs-debug: bmap f: block 1: corrupt metadata" ]
	edit "$T/s.img" <<<"sif f block[IND] 99999"
	debug "$T/s.img" "blocks f"
	assert_failure 4
	assert_output "${b[0]} ${b[*]:2:10}"
	[ "$stderr" = "sufs-debug: blocks f: a block pointer out of range at logical block 1" ]
	edit "$T/s.img" <<<"sif f block[1] ${b[1]}"
	debug "$T/s.img" "blocks f"
	assert_failure 4
	assert_output "${b[*]:0:12}"
	[ "$stderr" = "sufs-debug: blocks f: a block pointer out of range at logical block 12" ]
}

@test "cat and dump of a symbolic link named as <INO> write its target; dump to a host path that cannot be made fails" {
	ino=$(ino_of dir/link)
	debug "$IMG" "cat <$ino>"
	assert_success
	assert_output "../hello.txt"
	debug "$IMG" "dump <$ino> $T/link.out"
	assert_success
	[ "$(cat "$T/link.out")" = "../hello.txt" ] && [ ! -L "$T/link.out" ]
	debug "$IMG" "dump hello.txt $T/no/such/dir"
	assert_failure 4
	[ "$stderr" = "sufs-debug: dump $T/no/such/dir: No such file or directory" ]
	debug "$IMG" "dump -x hello.txt $T/x"
	assert_failure 4
	[ "$stderr" = "$(printf '%s\n' "sufs-debug: dump: unknown option -x" \
		"sufs-debug: dump: usage: dump [-p] PATH HOSTFILE")" ]
	[ ! -e "$T/x" ]
}

@test "icheck names the owner of each block" {
	blk=$("$DEBUG" -R "blocks hello.txt" "$IMG")
	ino=$(ino_of hello.txt)
	total=$("$DEBUG" -R super "$IMG" | awk '/^Block count:/ { print $3 }')
	debug "$IMG" "icheck $blk 0 2 $((total - 1))"
	assert_success
	assert_line --index 0 "$(printf 'Block\tInode number')"
	assert_line "$(printf '%s\t%s' "$blk" "$ino")"
	assert_line "$(printf '0\t<superblock of group 0>')"
	assert_line "$(printf '%s\t<block not found>' $((total - 1)))"
	debug "$IMG" "icheck $total"
	assert_failure 4
	[[ $stderr == "sufs-debug: icheck $total: not a block number"* ]]
}

@test "ncheck lists every name of an inode" {
	ino=$(ino_of hello.txt)
	debug "$IMG" "ncheck $ino 2"
	assert_success
	assert_line --index 0 "$(printf 'Inode\tPathname')"
	assert_line "$(printf '%s\t/hello.txt' "$ino")"
	assert_line "$(printf '%s\t/dir/hard' "$ino")"
	assert_line "$(printf '2\t/')"
	debug "$IMG" "ncheck 0"
	assert_failure 4
	[[ $stderr == "sufs-debug: ncheck 0: not an inode number"* ]]
}

@test "ncheck of an inode without a name says so and succeeds" {
	small_img "$T/s.img"
	edit "$T/s.img" <<<"set_dirent / f inode 7"
	debug "$T/s.img" "ncheck 4 7 100"
	assert_success
	assert_output "$(printf 'Inode\tPathname\n7\t/f\n7\t/fifo\n4\t<name not found>\n100\t<name not found>')"
}

@test "icheck names each part of the metadata of every group, and passes over an inode whose checksum fails" {
	mkimg "$T/g.img" 4M -g 256
	"$REPLAY" "$T/g.img" - <<<"create /f
write /f 0 5000 1"
	read -r b0 b1 <<<"$("$DEBUG" -R "blocks f" "$T/g.img")"
	debug "$T/g.img" "icheck 2 3 4 256 257 258 259 512 513 514 $b1"
	assert_success
	assert_output "$(printf '%s\n' 'Block	Inode number' '2	<block bitmap of group 0>' \
		'3	<inode bitmap of group 0>' '4	<inode table of group 0>' \
		'256	<superblock backup of group 1>' '257	<block bitmap of group 1>' \
		'258	<inode bitmap of group 1>' '259	<inode table of group 1>' \
		'512	<block bitmap of group 2>' '513	<inode bitmap of group 2>' \
		'514	<inode table of group 2>' "$b1	3")"
	edit "$T/g.img" <<<"sif f checksum 0"
	debug "$T/g.img" "icheck $b0"
	assert_success
	assert_output "$(printf 'Block\tInode number\n%s\t<block not found>' "$b0")"
	[ "$stderr" = "sufs-debug: icheck: warning: inode 3: checksum does not match (skipped)" ]
}

@test "super prints the superblock's fields" {
	mkimg "$T/s.img" 8M -b 1024 -L scratch -U 01234567-89ab-cdef-0123-456789abcdef
	debug "$T/s.img" super
	assert_success
	assert_line "Magic number:             0x53465553"
	assert_line "Block size:               1024"
	assert_line "Block count:              8192"
	assert_line 'Label:                    "scratch"'
	assert_line "UUID:                     01234567-89ab-cdef-0123-456789abcdef"
	assert_line --regexp '^State: +1 \(clean\)$'
	assert_line --regexp '^Write mode: +[0-9] \((softdep|sync|async)\)$'
}

@test "super shows each snapshot slot in use" {
	small_img "$T/s.img"
	"$SNAP" create "$T/s.img" one
	debug "$T/s.img" super
	assert_success
	assert_line --regexp '^Snapshot 0: +inode [0-9]+, flags 0x0, taken [0-9]+ \([A-Z][a-z]{2} .*[0-9]{4}\)$'
	refute_line --regexp '^Snapshot 1:'
}

@test "groups prints one line per group" {
	mkimg "$T/g.img" 8M -b 1024 -g 1024
	debug "$T/g.img" groups
	assert_success
	n=$("$DEBUG" -R super "$T/g.img" | awk '/^Group count:/ { print $3 }')
	[ "$n" -eq 8 ]
	[ "${#lines[@]}" -eq $((n + 1)) ]
	assert_line --index 1 --regexp '^ +0 +0 +1023 '
	assert_line --index 8 --regexp '^ +7 +7168 +8191 .* ok$'
}

@test "<INO> names an inode directly" {
	ino=$(ino_of hello.txt)
	debug "$IMG" "cat <$ino>"
	assert_success
	assert_output "hello, world"
	debug "$IMG" "stat <2>"
	assert_line --regexp '^Inode: 2 +Type: directory '
	dir=$(ino_of dir)
	debug "$IMG" "cat <$dir>/sub/deep.txt"
	assert_output "deep"
	printf 'cd <%s>\npwd\n' "$dir" >"$T/cmds"
	run "$DEBUG" -f "$T/cmds" "$IMG"
	assert_output "/dir"
	debug "$IMG" "stat <999999>"
	assert_failure 4
	[[ $stderr == "sufs-debug: stat <999999>: no such inode"* ]]
}

@test "a read-only session never changes the image" {
	cp "$IMG" "$T/ro.img"
	before=$(sha "$T/ro.img")
	mkdir "$T/out"
	cat >"$T/cmds" <<-EOF
	ls -l
	stat hello.txt
	cat sparse
	dump sparse $T/sparse.out
	rdump / $T/out
	blocks sparse
	icheck 1 2 3
	ncheck 2
	super
	groups
	cd dir
	pwd
	EOF
	run "$DEBUG" -f "$T/cmds" "$T/ro.img"
	assert_success
	[ "$(sha "$T/ro.img")" = "$before" ]
}

@test "-w opens the image for writing and leaves it clean" {
	cp "$IMG" "$T/rw.img"
	debug "$T/rw.img" "cat hello.txt"
	run "$DEBUG" -w -R "cat hello.txt" "$T/rw.img"
	assert_success
	assert_output "hello, world"
	debug "$T/rw.img" super
	assert_line --regexp '^State: +1 \(clean\)$'
}

# ---------------------------------------------------------------------------
# rdump

@test "rdump of a directory makes HOSTDIR/NAME; of the root fills HOSTDIR" {
	mkdir "$T/a" "$T/b"
	debug "$IMG" "rdump dir $T/a"
	assert_success
	[ -d "$T/a/dir/sub" ]
	cmp "$SRC/dir/sub/deep.txt" "$T/a/dir/sub/deep.txt"
	printf 'cd dir/sub\nrdump . %s\n' "$T/b" >"$T/cmds"
	run "$DEBUG" -f "$T/cmds" "$IMG"
	assert_success
	[ -f "$T/b/sub/deep.txt" ]
	mkdir "$T/c"
	debug "$IMG" "rdump / $T/c"
	assert_success
	diff -r --no-dereference --exclude=fifo "$SRC" "$T/c"
	[ -p "$T/c/fifo" ]
}

@test "rdump copies several sources and single files" {
	mkdir "$T/out"
	debug "$IMG" "rdump hello.txt dir/sub $T/out"
	assert_success
	cmp "$SRC/hello.txt" "$T/out/hello.txt"
	cmp "$SRC/dir/sub/deep.txt" "$T/out/sub/deep.txt"
}

@test "rdump needs an existing HOSTDIR and refuses one that is a symlink" {
	debug "$IMG" "rdump dir $T/missing"
	assert_failure 4
	[ "$stderr" = "sufs-debug: rdump $T/missing: No such file or directory" ]
	mkdir "$T/real"
	ln -s real "$T/alias"
	debug "$IMG" "rdump dir $T/alias"
	assert_failure 4
	[[ $stderr == *"is a symbolic link"* ]]
	[ -z "$(ls -A "$T/real")" ]
}

@test "rdump never overwrites what HOSTDIR already holds" {
	mkdir "$T/out"
	printf 'mine\n' >"$T/out/sparse"
	printf 'mine too\n' >"$T/out/fifo"
	debug "$IMG" "rdump / $T/out"
	assert_failure 4
	[[ $stderr == *"sufs-debug: rdump /sparse: File exists"* ]]
	[[ $stderr == *"sufs-debug: rdump /fifo: File exists"* ]]
	[ "$(cat "$T/out/sparse")" = "mine" ]
	[ "$(cat "$T/out/fifo")" = "mine too" ]
	cmp "$SRC/dir/sub/deep.txt" "$T/out/dir/sub/deep.txt"
}

@test "rdump on a terminal counts the entries copied; a failure starts on a line of its own" {
	"$MKFS" -q "$T/many.img" 8M
	for i in $(seq 101 250); do echo "create /f$i"; done | "$REPLAY" "$T/many.img" -
	mkdir "$T/out"
	: >"$T/out/f200"
	on_tty "$DEBUG" -R "rdump / $T/out" "$T/many.img"
	assert_failure 4
	assert_line --index 0 "Copying: 64"
	assert_line --index 1 "Copying: 99"
	assert_line --index 2 "sufs-debug: rdump /f200: File exists"
	[ -f "$T/out/f250" ]
}

@test "rdump recreates symlinks that point outside and writes nothing there" {
	mkdir -p "$T/src/esc/dir" "$T/victim" "$T/out/in"
	ln -s "$T/victim" "$T/src/esc/abs"
	ln -s ../../../victim "$T/src/esc/rel"
	ln -s /etc/passwd "$T/src/esc/passwd"
	printf 'payload\n' >"$T/src/esc/dir/file"
	mkimg "$T/esc.img" 16M -d "$T/src"
	debug "$T/esc.img" "rdump / $T/out/in"
	assert_success
	[ "$(readlink "$T/out/in/esc/abs")" = "$T/victim" ]
	[ "$(readlink "$T/out/in/esc/rel")" = "../../../victim" ]
	[ "$(readlink "$T/out/in/esc/passwd")" = "/etc/passwd" ]
	[ -z "$(ls -A "$T/victim")" ]
}

@test "rdump does not write through a symlink with a directory's name" {
	# the image holds symlink x1 -> victim, then a directory also named x1
	mkdir -p "$T/src/x2" "$T/victim" "$T/out"
	ln -s "$T/victim" "$T/src/x1"
	printf 'payload\n' >"$T/src/x2/file"
	mkimg "$T/dup.img" 16M -d "$T/src"
	patch_dirent "$T/dup.img" / x2 x1
	debug "$T/dup.img" "ls"
	[ "$(printf '%s\n' "${lines[@]}" | grep -c '^x1$')" -eq 2 ]
	debug "$T/dup.img" "rdump / $T/out"
	assert_failure 4
	[[ $stderr == *"sufs-debug: rdump /x1: File exists"* ]]
	[ "$(readlink "$T/out/x1")" = "$T/victim" ]
	[ -z "$(ls -A "$T/victim")" ]
}

@test "rdump does not enter a symlink already in HOSTDIR" {
	mkdir "$T/victim" "$T/out"
	ln -s "$T/victim" "$T/out/dir"
	debug "$IMG" "rdump / $T/out"
	assert_failure 4
	[[ $stderr == *"sufs-debug: rdump /dir: File exists"* ]]
	[ -z "$(ls -A "$T/victim")" ]
	[ "$(readlink "$T/out/dir")" = "$T/victim" ]
}

@test "rdump and ncheck stop at a directory that loops back to the root" {
	mkdir -p "$T/src/d/lp" "$T/out"
	printf 'once\n' >"$T/src/d/file"
	mkimg "$T/loop.img" 16M -d "$T/src"
	patch_dirent "$T/loop.img" /d lp lp 2
	debug "$T/loop.img" "rdump / $T/out"
	assert_failure 4
	[[ $stderr == *"sufs-debug: rdump /d/lp: directory inode 2 was already copied"* ]]
	[ "$(cat "$T/out/d/file")" = "once" ]
	[ ! -e "$T/out/d/lp" ]
	debug "$T/loop.img" "ncheck 2"
	assert_success
	assert_line "$(printf '2\t/')"
	assert_line "$(printf '2\t/d/lp')"
}

@test "rdump reports each damaged entry, skips it, copies the rest and fails" {
	small_img "$T/s.img"
	"$DEBUG" -w -R "create /d/sub/y" "$T/s.img"
	edit "$T/s.img" <<'EOF'
sif sl size 70000
sif sl2 block[0] 0x66006666
sif fifo mode 0170644
set_dirent d/sub y inode 20
EOF
	mkdir "$T/out"
	debug "$T/s.img" "rdump / $T/out"
	assert_failure 4
	[ "$stderr" = "$(printf '%s\n' \
		"sufs-debug: rdump /d/sub/y: inode 20: No such file or directory" \
		"sufs-debug: rdump /sl: the link's target is 70000 bytes long: skipped" \
		"sufs-debug: rdump /sl2: the link's target is empty or holds a NUL byte: skipped" \
		"sufs-debug: rdump /fifo: inode 7 has no known file type (mode 0170644): skipped")" ]
	[ "$(cd "$T/out" && find . | LC_ALL=C sort | tr '\n' ' ')" = ". ./d ./d/sub ./d/sub/x ./f " ]
	cmp <("$DEBUG" -R "cat f" "$T/s.img") "$T/out/f"
	[ "$(cat "$T/out/d/sub/x")" = "$("$DEBUG" -R "cat d/sub/x" "$T/s.img")" ]
	# a symbolic link whose block pointer is out of range
	edit "$T/s.img" <<'EOF'
sif sl size 200
sif sl block[0] 99999
EOF
	mkdir "$T/out2"
	debug "$T/s.img" "rdump sl $T/out2"
	assert_failure 4
	[ "$stderr" = "sufs-debug: rdump sl: reading the link: corrupt metadata" ]
	[ -z "$(ls -A "$T/out2")" ]
}

@test "rdump: a trailing slash, the root twice, a missing source, a directory its parent does not list" {
	small_img "$T/s.img"
	mkdir "$T/a" "$T/b" "$T/c"
	debug "$T/s.img" "rdump d/ $T/a"
	assert_success
	[ "$(cd "$T/a" && find . | LC_ALL=C sort | tr '\n' ' ')" = ". ./d ./d/sub ./d/sub/x " ]
	debug "$T/s.img" "rdump / nope / $T/b"
	assert_failure 4
	[ "$stderr" = "$(printf '%s\n' "sufs-debug: rdump nope: No such file or directory" \
		"sufs-debug: rdump /: the root was already copied: skipped")" ]
	[ -f "$T/b/f" ] && [ -d "$T/b/d/sub" ]
	edit "$T/s.img" <<<"set_dirent / d inode 7"
	printf 'cd <3>\nrdump . sub %s\n' "$T/c" >"$T/cmds"
	run --separate-stderr "$DEBUG" -f "$T/cmds" "$T/s.img"
	assert_failure 4
	[ "$stderr" = "sufs-debug: rdump .: cannot find the directory's name in its parent" ]
	[ "$(cd "$T/c" && find . | LC_ALL=C sort | tr '\n' ' ')" = ". ./sub ./sub/x " ]
}

@test "rdump keeps the hard links of many multiply linked files" {
	mkdir -p "$T/src/a" "$T/src/b" "$T/out"
	for i in $(seq 1 80); do
		printf '%s\n' "$i" >"$T/src/a/f$i"
		ln "$T/src/a/f$i" "$T/src/b/g$i"
	done
	mkimg "$T/links.img" 16M -d "$T/src"
	debug "$T/links.img" "rdump / $T/out"
	assert_success
	for i in $(seq 1 80); do
		[ "$(stat -c '%i %h' "$T/out/a/f$i")" = "$(stat -c '%i %h' "$T/out/b/g$i")" ] ||
			fail "f$i and g$i are not one file"
		[ "$(cat "$T/out/b/g$i")" = "$i" ]
	done
	[ "$(stat -c %h "$T/out/a/f80")" -eq 2 ]
}

@test "rdump does not overwrite a hard link's first copy with a second entry of the same name" {
	mkimg "$T/hl.img" 4M
	"$REPLAY" "$T/hl.img" - <<'EOF'
mkdir /d
create /d/f1
write /d/f1 0 10 1
link /d/f1 /d/f2
EOF
	"$DEBUG" -w -R "set_dirent /d f2 name f1" "$T/hl.img"
	mkdir "$T/out"
	debug "$T/hl.img" "rdump / $T/out"
	assert_failure 4
	[ "$stderr" = "sufs-debug: rdump /d/f1: linking to d/f1: File exists" ]
	[ "$(ls -A "$T/out/d")" = "f1" ]
	[ "$(stat -c %h "$T/out/d/f1")" -eq 1 ]
	cmp <("$DEBUG" -R "cat d/f1" "$T/hl.img") "$T/out/d/f1"
}

@test "rdump never uses an entry named .. from the image" {
	mkdir -p "$T/src/zz" "$T/out/in"
	printf 'payload\n' >"$T/src/zz/file"
	mkimg "$T/dots.img" 16M -d "$T/src"
	patch_dirent "$T/dots.img" / zz ..
	debug "$T/dots.img" "rdump / $T/out/in"
	assert_success
	[ -z "$(ls -A "$T/out/in")" ]
	[ "$(ls -A "$T/out")" = "in" ]
	[ ! -e "$T/file" ]
}

# ---------------------------------------------------------------------------
# The EXAMPLES of sufs-debug(8) are a promise: run one after the other in an
# empty directory, each command prints what the page shows.  The page is
# turned into a shell script and the transcript it should print; a session
# at the prompt is fed its commands on standard input (as -f - does) and
# must print the lines of the page that are not prompts.

@test "the examples of sufs-debug(8) run in order from an empty directory and print what the page shows" {
	require_root     # the page shows the files as user 0's
	require_cmd dot  # the session renders its graph with deps --svg
	run_examples sufs-debug.8 --prompt sufs-debug
	run diff -u "$T/expected" "$T/actual"
	assert_success
	# and every image the page leaves behind is clean
	for img in "$T"/run/*.img; do
		"$FSCK" -fn "$img" >/dev/null
	done
}

# ---------------------------------------------------------------------------
# debugfs's habits: a backup superblock, catastrophic mode, inode_dump,
# dirsearch, filefrag

@test "-s BLOCK reads a backup superblock when the primary is damaged, as debugfs -s" {
	mkimg "$T/b.img" 32M -b 1024 -d "$SRC"
	"$DEBUG" -w -R "ssv checksum 1" "$T/b.img"
	debug "$T/b.img" "cat /hello.txt"
	assert_failure 2
	run --separate-stderr "$DEBUG" -s 8192 -R "cat /hello.txt" "$T/b.img"
	assert_success
	assert_output "hello, world"
	run --separate-stderr "$DEBUG" -s 8192:1024 -R "super" "$T/b.img"
	assert_success
	assert_line --regexp '^Superblock group: +1$'
	run --separate-stderr "$DEBUG" -s 8193 -R ls "$T/b.img"
	assert_failure 2
	assert_equal "$stderr" "sufs-debug: $T/b.img: no superblock copy at block 8193, for any block size (-s names a backup by the block it starts)"
	run --separate-stderr "$DEBUG" -s x -R ls "$T/b.img"
	assert_failure 1
	assert_equal "$stderr" "sufs-debug: -s: not a block number, or BLOCK:BLOCKSIZE: x"
	run --separate-stderr "$DEBUG" -w -s 8192 -R ls "$T/b.img"
	assert_failure 1
	assert_equal "$stderr" "sufs-debug: -w goes without -s: to repair from a backup superblock, run fsck.sufs -s"
}

@test "-c opens in catastrophic mode: checksums ignored, no bitmap read, the bitmap commands refused" {
	cp "$IMG" "$T/c.img"
	# an inode bitmap of garbage, and a descriptor whose checksum fails
	local ibm
	ibm=$("$DEBUG" -R groups "$T/c.img" | awk '$1 == "0" { print $5 }')
	"$DEBUG" -w -f - "$T/c.img" <<-EOF
	zap_block $ibm 0 64 165
	set_bg 0 checksum 7
	EOF
	debug "$T/c.img" "ls"
	assert_failure 2
	run --separate-stderr "$DEBUG" -c -R "cat /hello.txt" "$T/c.img"
	assert_success
	assert_output "hello, world"
	for c in "testb 1" "testi /" "ffb" "ffi"; do
		run --separate-stderr "$DEBUG" -c -R "$c" "$T/c.img"
		assert_failure 4
		assert_equal "$stderr" "sufs-debug: ${c%% *}: catastrophic mode (-c) reads no bitmap"
	done
	# icheck goes by the inodes themselves
	blk=$("$DEBUG" -c -R "blocks /hello.txt" "$T/c.img")
	run --separate-stderr "$DEBUG" -c -R "icheck $blk" "$T/c.img"
	assert_success
	assert_line "$blk	$("$DEBUG" -c -R "stat /hello.txt" "$T/c.img" | awk 'NR == 1 { print $2 }')"
	run --separate-stderr "$DEBUG" -c -w -R ls "$T/c.img"
	assert_failure 1
	assert_equal "$stderr" "sufs-debug: -w goes without -c: catastrophic mode only reads"
}

@test "inode_dump (id) prints an inode's bytes, -b its block pointers" {
	debug "$IMG" "inode_dump /hello.txt"
	assert_success
	# mode 0100644, flags 0, two links (hello.txt and dir/hard)
	assert_line --index 0 --regexp '^0000  a4 81 00 00 02 00 00 00  '
	assert_line --index -1 "0100"
	local ptr
	ptr=$(printf '%02x' $(("$("$DEBUG" -R "blocks /hello.txt" "$IMG")" & 255)))
	debug "$IMG" "id -b /hello.txt"
	assert_success
	assert_line --index 0 --regexp "^0060  $ptr "
	assert_line --index -1 "00d8"
	debug "$IMG" "id"
	assert_failure 4
	assert_equal "$stderr" "sufs-debug: id: usage: inode_dump [-b] PATH"
}

@test "dirsearch says where an entry lies, and fails for a name that is not there" {
	local blk
	blk=$("$DEBUG" -R "blocks /dir" "$IMG")
	debug "$IMG" "dirsearch /dir hard"
	assert_success
	assert_output --regexp "^Entry found at logical block 0, phys $blk, offset [0-9]+\$"
	off=$(sed 's/.*offset //' <<<"$output")
	# the entry there is the name's (man/sufs.5: the name at byte 8)
	run dd if="$IMG" bs=1 skip=$((blk * 4096 + off + 8)) count=4 status=none
	assert_output "hard"
	debug "$IMG" "dirsearch /dir nothere"
	assert_failure 4
	assert_equal "$stderr" "sufs-debug: dirsearch nothere: no such entry in /dir"
	debug "$IMG" "dirsearch /hello.txt x"
	assert_failure 4
	assert_equal "$stderr" "sufs-debug: dirsearch /hello.txt: not a directory"
}

@test "filefrag counts a file's runs of contiguous blocks; -v lists them" {
	debug "$IMG" "filefrag /hello.txt"
	assert_success
	assert_output "/hello.txt: 1 contiguous extent, 1 block"
	debug "$IMG" "filefrag -v /sparse"
	assert_success
	assert_line --index 0 " ext    logical   physical   length"
	assert_line --index 1 --regexp '^ +0 +256 +[0-9]+ +1$'
	assert_line --index 2 "/sparse: 1 contiguous extent, 1 block"
	debug "$IMG" "filefrag /empty"
	assert_success
	assert_output "/empty: 0 contiguous extents, 0 blocks"
}
