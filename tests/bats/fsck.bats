#!/usr/bin/env bats
# fsck.sufs: clean images stay clean, -n writes nothing, the exit codes of
# fsck(8), bad images, and damage of every kind, each made with a precise
# edit at offsets from sufs(5) and repaired so that a second full check is
# clean (e2fsprogs' expect.1 / expect.2 rule).
#
# A damage case is one line: `damage_case EDIT-COMMAND...` makes a
# populated image, applies the edit and runs fsck.sufs -fy twice; the test
# then says what the first run had to find.  Adding a case is adding a test.

load helper

bats_require_minimum_version 1.5.0

# The editor: python3, the format of sufs(5), checksums recomputed unless
# the damage is the checksum.  `edit CMD ARGS...` works on $IMG:
#   ino PATH                    print the inode number of PATH
#   iget PATH FIELD             print an inode field (mode links size blocks b0..b14)
#   iset PATH FIELD VALUE [raw] set it (raw: leave the checksum stale)
#   bit block|inode N 0|1       clear or set a bitmap bit
#   freeblock                   print the first free block of group 0
#   dset DIR NAME ino|ftype|reclen V
#                               change an entry (the block is sealed again)
#   dcsum DIR                   break the checksum of DIR's first block
#   sbbreak OFFSET              flip a byte of the primary superblock
#   sbzero                      zero the primary superblock
#   sbset FIELD VALUE           set free_blocks, free_inodes, state or flags
EDIT_PY=$(cat <<'PY'
# sufs image editor for tests: precise damage at offsets from sufs.5
import struct, sys, zlib
img, cmd, args = sys.argv[1], sys.argv[2], sys.argv[3:]
f = open(img, 'r+b')
def rd(off, n):
    f.seek(off); return f.read(n)
def wr(off, b):
    f.seek(off); f.write(b)
sb = rd(1024, 1024)
BS, BLOCKS = struct.unpack_from('<IQ', sb, 8)[0], struct.unpack_from('<Q', sb, 16)[0]
BPG, IPG, GROUPS, GDTB = struct.unpack_from('<IIII', sb, 40)
def has_backup(g):
    if g <= 1: return g == 1
    for b in (3, 5, 7):
        n = g
        while n % b == 0: n //= b
        if n == 1: return True
    return False
def layout(g):
    start = g * BPG
    if g == 0: meta = 1024 // BS + 1 + GDTB
    elif has_backup(g): meta = start + 1
    else: meta = start
    return dict(bb=meta, ib=meta + 1, it=meta + 2, first=meta + 2 + IPG * 256 // BS, start=start)
INODE = dict(mode=(0, 'H'), links=(4, 'I'), size=(16, 'Q'), blocks=(24, 'Q'))
for i in range(15): INODE['b%d' % i] = (96 + 8 * i, 'Q')
def ioff(ino):
    g, i = (ino - 1) // IPG, (ino - 1) % IPG
    return layout(g)['it'] * BS + i * 256
def iseal(ino):
    o = ioff(ino); raw = rd(o, 252)
    wr(o + 252, struct.pack('<I', zlib.crc32(raw, zlib.crc32(struct.pack('<I', ino)))))
def iget(ino, field):
    o, t = INODE[field]; return struct.unpack_from('<' + t, rd(ioff(ino) + o, 8))[0]
def iset(ino, field, v, seal=True):
    o, t = INODE[field]; wr(ioff(ino) + o, struct.pack('<' + t, v))
    if seal: iseal(ino)
def dseal(blk):
    raw = rd(blk * BS, BS - 4)
    wr(blk * BS + BS - 4, struct.pack('<I', zlib.crc32(raw, zlib.crc32(struct.pack('<Q', blk)))))
def entries(dino):
    """(blk, off, ino, name) of every live entry in the direct blocks"""
    out = []
    for l in range(iget(dino, 'size') // BS):
        blk = iget(dino, 'b%d' % l)
        data = rd(blk * BS, BS); off = 0
        while off < BS - 8:
            ino, rl, nl = struct.unpack_from('<IHB', data, off)
            if ino: out.append((blk, off, ino, data[off + 8:off + 8 + nl].decode()))
            off += rl
    return out
def lookup(path):
    ino = 2
    for part in [p for p in path.split('/') if p]:
        ino = [e[2] for e in entries(ino) if e[3] == part][0]
    return ino
def ent(dpath, name):
    return [e for e in entries(lookup(dpath)) if e[3] == name][0]
def bit(which, n, v):
    if which == 'block': g, b = n // BPG, n % BPG; blk = layout(g)['bb']
    else: g, b = (n - 1) // IPG, (n - 1) % IPG; blk = layout(g)['ib']
    o = blk * BS + b // 8; x = rd(o, 1)[0]
    x = x | (1 << (b % 8)) if v else x & ~(1 << (b % 8))
    wr(o, bytes([x]))
def free_block():
    g = 0; l = layout(g); data = rd(l['bb'] * BS, BS)
    for b in range(l['first'], min(BPG, BLOCKS)):
        if not data[b // 8] >> (b % 8) & 1: return b
a = args
if cmd == 'ino': print(lookup(a[0]))
elif cmd == 'iget': print(iget(lookup(a[0]), a[1]))
elif cmd == 'iset': iset(lookup(a[0]), a[1], int(a[2], 0), seal=len(a) < 4)
elif cmd == 'bit': bit(a[0], int(a[1]), int(a[2]))
elif cmd == 'freeblock': print(free_block())
elif cmd == 'dset':          # DIR NAME ino|ftype VALUE
    blk, off, _, _ = ent(a[0], a[1])
    if a[2] == 'ino': wr(blk * BS + off, struct.pack('<I', int(a[3], 0)))
    elif a[2] == 'reclen': wr(blk * BS + off + 4, struct.pack('<H', int(a[3], 0)))
    else: wr(blk * BS + off + 7, bytes([int(a[3], 0)]))
    dseal(blk)
elif cmd == 'dcsum':         # break the checksum of DIR's first block
    blk = iget(lookup(a[0]), 'b0'); o = blk * BS + BS - 4
    wr(o, bytes([rd(o, 1)[0] ^ 0xff]))
elif cmd == 'sbbreak': wr(1024 + int(a[0], 0), bytes([rd(1024 + int(a[0], 0), 1)[0] ^ 0xff]))
elif cmd == 'sbzero': wr(1024, bytes(1024))
elif cmd == 'sbset':         # FIELD VALUE, checksum recomputed
    o, t = dict(free_blocks=(24, 'Q'), free_inodes=(36, 'I'), state=(64, 'I'), flags=(68, 'I'))[a[0]]
    wr(1024 + o, struct.pack('<' + t, int(a[1], 0)))
    wr(1024 + 1020, struct.pack('<I', zlib.crc32(rd(1024, 1020))))
else: sys.exit('unknown command ' + cmd)
PY
)

edit() {
	python3 -c "$EDIT_PY" "$IMG" "$@"
}

# A populated image: files (one with an indirect block), a hard link,
# nested directories, symlinks, a fifo, a directory of twenty files.
mkpop() {
	local src=$T/src i
	rm -rf "$src"
	mkdir -p "$src/d1/d2" "$src/e"
	echo hi >"$src/f1"
	head -c 100000 /dev/zero | tr '\0' a >"$src/big"
	ln "$src/f1" "$src/d1/hard"
	ln -s f1 "$src/sl"
	ln -s "$(printf 'y%.0s' $(seq 200))" "$src/longsl"
	mkfifo "$src/fifo"
	for i in $(seq 20); do echo "$i" >"$src/e/file$i"; done
	rm -f "$IMG"
	"$MKFS" -q -d "$src" "$@" "$IMG" 16M
}

setup() {
	IMG=$T/img
}

# damage_case 'EDIT...': a populated image, damaged by `edit EDIT...`
# (evaluated once the image exists, so it may ask the editor for numbers);
# the first fsck -fy must repair (exit 1) and leave what a second full
# check finds clean (exit 0).  $first holds the first run's output.
damage_case() {
	mkpop
	eval "edit $*"
	run "$FSCK" -fy "$IMG"
	first=$output
	echo "first run: $first"
	[ "$status" -eq 1 ]
	run "$FSCK" -fn "$IMG"
	echo "second run: $output"
	[ "$status" -eq 0 ]
}

# first_has TEXT: the first run said TEXT.
first_has() {
	[[ $first == *"$1"* ]] || { echo "missing: $1"; return 1; }
}

# ---- messages -------------------------------------------------------------

@test "a name in a message is escaped where its bytes would not show; --json keeps them" {
	mkimg "$IMG"
	printf 'create "a\\x1b[2Jb\\\\c"\n' >"$T/s"
	"$REPLAY" "$IMG" "$T/s"
	"$DEBUG" -w -R 'set_dirent / "a\x1b[2Jb\\c" file_type 7' "$IMG"
	run "$FSCK" -fn "$IMG"
	assert_failure 4
	assert_output --partial "Entry 'a\\x1b[2Jb\\\\c' in directory inode 2 has file type 7"
	refute_output --partial $'\e'
	run "$FSCK" -fn --json "$IMG"
	assert_output --partial '"message": "entry '"'"'a\u001b[2Jb\\c'"'"' in directory'
}

# ---- clean images ---------------------------------------------------------

@test "a fresh image is clean" {
	mkimg "$IMG"
	run "$FSCK" -f "$IMG"
	assert_success
	assert_output --partial "2/1024 files"
}

@test "a populated image is clean, and so is a checked one" {
	mkpop
	run "$FSCK" -fn "$IMG"
	assert_success
	run "$FSCK" -fy "$IMG"
	assert_success
	refute_output --partial "MODIFIED"
}

@test "a populated tree from mktree is clean" {
	require_mktree
	"$MKTREE" --files 300 "$T/tree" >/dev/null
	mkimg "$IMG" 64M -d "$T/tree"
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "a clean image is not checked without -f" {
	mkimg "$IMG"
	run "$FSCK" "$IMG"
	assert_success
	assert_output "$IMG: clean, 2/1024 files, 69/4096 blocks"
}

@test "a clean image with a damaged group descriptor is checked without -f" {
	mkimg "$IMG"
	"$DEBUG" -w -R "set_bg 0 checksum 5" "$IMG"
	before=$(sha "$IMG")
	run "$FSCK" -n "$IMG"
	assert_failure 4
	assert_output --partial "Group 0 descriptor is damaged (its checksum does not match)"
	[ "$(sha "$IMG")" = "$before" ]
	run "$FSCK" -p "$IMG"
	assert_failure 4
	run "$FSCK" -y "$IMG"
	assert_failure 1
	run "$FSCK" "$IMG"
	assert_success
	assert_output --partial "clean"
}

@test "a descriptor's impossible free count, with a good checksum, is named as such" {
	mkimg "$IMG"
	"$DEBUG" -w -R "set_bg 0 free_blocks 4294967295" "$IMG"
	run --separate-stderr "$DEBUG" -R "ls /" "$IMG"
	assert_failure 2
	[[ $stderr == "sufs-debug: cannot open $IMG: corrupt metadata (group 0 descriptor field free_blocks)"* ]]
	run --separate-stderr "$SNAP" list "$IMG"
	assert_failure 2
	assert_equal "$stderr" "sufs-snap: $IMG: corrupt metadata (group 0 descriptor field free_blocks)"
	run "$FSCK" -n "$IMG"
	assert_failure 4
	assert_output --partial "Group 0 descriptor is damaged (field free_blocks).  Fix? no"
	run "$FSCK" -y "$IMG"
	assert_failure 1
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "a clean image whose summary counts are past the totals is checked without -f" {
	mkimg "$IMG"
	"$DEBUG" -w -R "ssv free_inodes 4294967295" "$IMG"
	before=$(sha "$IMG")
	run "$FSCK" -n "$IMG"
	assert_failure 4
	assert_output --partial "Superblock summary is wrong: free blocks 4027, free inodes 4294967295; should be 4027, 1022."
	refute_output --partial "clean,"
	[ "$(sha "$IMG")" = "$before" ]
	run "$FSCK" -p "$IMG"
	assert_failure 1
	run "$FSCK" "$IMG"
	assert_success
	assert_output "$IMG: clean, 2/1024 files, 69/4096 blocks"
}

@test "an image marked as needing a check is checked without -f" {
	mkimg "$IMG"
	edit sbset flags 1
	run "$FSCK" -y "$IMG"
	assert_success
	assert_output --partial "Pass 5"
	run "$FSCK" "$IMG"
	assert_output --partial "clean"
}

# The checker counts a file's names in a byte of its own up to 30, and
# past that in a table (check_int.h): 100 names check clean, and a link
# count that is wrong is put back to 100, not to what a byte could hold.
@test "a file with 100 names: clean, and a wrong link count is set back to 100" {
	local src=$T/src i
	rm -rf "$src"
	mkdir -p "$src/d"
	echo many >"$src/f1"
	for i in $(seq 99); do ln "$src/f1" "$src/d/h$i"; done
	"$MKFS" -q -d "$src" "$IMG" 16M
	[ "$(edit iget /f1 links)" -eq 100 ]
	run "$FSCK" -fn "$IMG"
	assert_success
	edit iset /f1 links 31
	run "$FSCK" -fy "$IMG"
	assert_failure 1
	assert_output --partial "link count is 31, should be 100"
	[ "$(edit iget /f1 links)" -eq 100 ]
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "a repair records the check in the superblock" {
	mkpop
	edit iset /f1 links 9
	"$FSCK" -fy "$IMG" || true
	run "$DUMP" -h "$IMG"
	assert_output --regexp "Filesystem state: +clean"
	assert_output --regexp "Last check result: +1"
}

# ---- options and exit codes -------------------------------------------------

@test "fsck -n never opens the image for writing" {
	mkpop
	edit iset /f1 links 9
	edit bit block "$(edit freeblock)" 1
	edit dcsum /d1
	before=$(sha "$IMG")
	chmod 0444 "$IMG"
	run "$FSCK" -fn "$IMG"
	assert_failure 4
	assert_output --partial "Fix? no"
	[ "$(sha "$IMG")" = "$before" ]
}

@test "fsck without a terminal and without -n, -y or -p answers no" {
	mkpop
	edit iset /f1 links 9
	before=$(sha "$IMG")
	run "$FSCK" -f "$IMG" </dev/null
	assert_failure 4
	[ "$(sha "$IMG")" = "$before" ]
}

# ---- questions on a terminal (tmux) ------------------------------------------------

# fsck.sufs -f ARGS... on $IMG in a detached tmux window 100x30, its own
# tmux server; the screen is read with `screen`.
start_fsck() {
	require_cmd tmux
	export TMUX_TMPDIR=$T
	tmux -f /dev/null new-session -d -s fs -x 100 -y 30 \
		"$FSCK -f $* $IMG; echo EXITED \$?; sleep 30"
}

screen() { tmux capture-pane -t fs -p -S -200; }

# wait_for REGEX: until the screen has a line that matches (5 s at most)
wait_for() {
	local i
	for i in $(seq 50); do
		screen | grep -qE "$1" && return 0
		sleep 0.1
	done
	echo "waited for: $1"; screen
	return 1
}

teardown() {
	if [ -n "${TMUX_TMPDIR:-}" ]; then
		tmux kill-server 2>/dev/null || true
	fi
}

@test "on a terminal each question is asked: y fixes one problem, n leaves the other" {
	mkpop
	edit iset /f1 links 9
	blk=$(edit freeblock)
	edit bit block "$blk" 1
	start_fsck
	wait_for 'link count is 9, should be 2\.  Fix<y>\? ?$'
	tmux send-keys -t fs y        # one key, no Enter (as e2fsck)
	wait_for "^Block $blk marked in use but used by nothing\.  Free<y>\? ?\$"
	tmux send-keys -t fs x        # not an answer: asked again
	wait_for '^\(y yes, n no, a yes to all\)  Free<y>\? ?$'
	tmux send-keys -t fs n
	wait_for '^EXITED 5$'         # 1 (corrected) | 4 (left uncorrected)
	screen | grep -q 'link count is 9, should be 2\.  Fix<y>? yes$'
	screen | grep -q '^(y yes, n no, a yes to all)  Free<y>? no$'
	screen | grep -q 'FILE SYSTEM WAS MODIFIED'
	# the link count was fixed, the leaked block was not
	[ "$(edit iget /f1 links)" -eq 2 ]
	run "$FSCK" -fn "$IMG"
	assert_failure 4
	assert_output --partial "Block $blk marked in use but used by nothing.  Free? no"
	refute_output --partial "link count"
}

@test "on a terminal, a answers yes to this question and every later one; Enter takes the default" {
	mkpop
	edit iset /f1 links 9
	edit iset /big blocks 7
	edit bit block "$(edit freeblock)" 1
	start_fsck
	wait_for 'block count is 7, should be [0-9]+\.  Fix<y>\? ?$'
	tmux send-keys -t fs Enter
	wait_for 'link count is 9, should be 2\.  Fix<y>\? ?$'
	tmux send-keys -t fs a
	wait_for '^EXITED 1$'
	screen | grep -qE 'block count is 7, should be [0-9]+\.  Fix<y>\? yes$'
	screen | grep -q 'link count is 9, should be 2\.  Fix<y>? yes to all$'
	screen | grep -q 'marked in use but used by nothing\.  Free? yes$'
	run "$FSCK" -fn "$IMG"
	assert_success
}

# ---- interrupts -------------------------------------------------------------------

# interrupt SIGNAL ARGS...: run fsck.sufs ARGS... -C 3 on $IMG with its
# progress going into a pipe, read the first line (the handlers are set by
# then) and send SIGNAL; the check cannot end before it, since it blocks
# once the pipe is full: a 4G image with 2^20 inodes writes 4096 lines
# (over 100K) in pass 1 alone, and a pipe holds 64K.  $rc is its exit
# status, $T/out what it printed.
interrupt() {
	local sig=$1 pid line
	shift
	rm -f "$T/progress"
	mkfifo "$T/progress"
	"$FSCK" "$@" -C 3 "$IMG" 3>"$T/progress" >"$T/out" 2>&1 &
	pid=$!
	exec 4<"$T/progress"
	read -r line <&4
	[[ $line == "1 "* ]]
	kill -"$sig" "$pid"
	cat <&4 >/dev/null
	exec 4<&-
	rc=0
	wait "$pid" || rc=$?
	cat "$T/out"
}

@test "SIGINT stops fsck -n cleanly with exit 32, and the image is unchanged" {
	mkimg "$IMG" 4G -i 4096
	before=$(stat -c '%s %y' "$IMG")
	interrupt INT -fn
	[ "$rc" -eq 32 ]
	grep -q 'interrupted; the check did not finish' "$T/out"
	# -n never opened it for writing: not one byte written (a sparse 4G
	# image is too slow to hash; any write would change the mtime)
	[ "$(stat -c '%s %y' "$IMG")" = "$before" ]
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "SIGINT during fsck -fy says the check was interrupted, and prints no counts of files and blocks" {
	mkimg "$IMG" 4G -i 4096
	interrupt INT -fy
	[ "$rc" -eq 32 ]
	grep -qx "$IMG: interrupted; the check did not finish." "$T/out"
	! grep -q 'files, .* blocks' "$T/out" || fail "counts after an interrupt: $(cat "$T/out")"
	# a second run goes to the end, and counts
	run "$FSCK" -fn "$IMG"
	assert_success
	assert_line --regexp "^$IMG: [0-9]+/[0-9]+ files, [0-9]+/[0-9]+ blocks\$"
}

@test "SIGTERM stops fsck -y cleanly with exit 32, and a full check then finds the image clean" {
	mkimg "$IMG" 4G -i 4096
	interrupt TERM -fy
	[ "$rc" -eq 32 ]
	grep -q 'interrupted; the check did not finish' "$T/out"
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "Ctrl-D at a question answers no, and the check goes on" {
	mkpop
	edit iset /f1 links 9
	edit bit block "$(edit freeblock)" 1
	start_fsck
	wait_for 'link count is 9, should be 2\.  Fix<y>\? ?$'
	tmux send-keys -t fs C-d
	wait_for 'marked in use but used by nothing\.  Free<y>\? ?$'
	tmux send-keys -t fs y
	wait_for '^EXITED [0-9]+$'
	screen | grep -q 'link count is 9, should be 2\.  Fix<y>? no$'
	screen | grep -qE '^EXITED 5$'         # 4 | 1: one left, one fixed
	[ "$(edit iget /f1 links)" -eq 9 ]
}

@test "SIGHUP (the terminal gone) stops the check as an interrupt does, exit 32" {
	mkpop
	edit iset /f1 links 9
	start_fsck
	wait_for 'link count is 9, should be 2\.  Fix<y>\? ?$'
	# the pane's shell runs the check as its one child (the echo is after)
	pkill -HUP -P "$(tmux display-message -p -t fs '#{pane_pid}')"
	wait_for '^EXITED [0-9]+$'
	screen | grep -q 'interrupted; the check did not finish'
	screen | grep -qE '^EXITED 36$'
}

@test "SIGINT at a question answers no and stops the check with exit 32" {
	mkpop
	edit iset /f1 links 9
	edit bit block "$(edit freeblock)" 1
	start_fsck
	wait_for 'link count is 9, should be 2\.  Fix<y>\? ?$'
	tmux send-keys -t fs C-c
	wait_for '^EXITED [0-9]+$'
	screen | grep -q 'link count is 9, should be 2\.  Fix<y>? no$'
	screen | grep -q 'interrupted; the check did not finish'
	[ "$(screen | grep -c 'marked in use but used by nothing')" -eq 0 ] # pass 5 never ran
	screen | grep -qE '^EXITED 36$'        # 32 | 4: the link count left unfixed
	[ "$(edit iget /f1 links)" -eq 9 ]
	run "$FSCK" -fy "$IMG"
	assert_failure 1
	assert_output --partial "link count is 9, should be 2.  Fix? yes"
	assert_output --partial "marked in use but used by nothing.  Free? yes"
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "usage errors exit 16" {
	run "$FSCK"
	assert_failure 16
	run "$FSCK" -n -y "$T/x"
	assert_failure 16
	run "$FSCK" -p -n "$T/x"
	assert_failure 16
	run "$FSCK" --bogus "$T/x"
	assert_failure 16
	run "$FSCK" a b
	assert_failure 16
	run "$FSCK" -s nonsense "$T/x"
	assert_failure 16
	run --separate-stderr "$FSCK" --json -n -y "$T/x"
	assert_failure 16
	assert_equal "$output" ""
	assert_equal "$stderr" "fsck.sufs: -n, -y and -p exclude each other"
	run --separate-stderr "$FSCK" -C 99 -f "$T/x" 99>&-
	assert_failure 16
	assert_equal "$stderr" "fsck.sufs: -C: file descriptor 99 is not open"
}

@test "fsck -b BLOCK, e2fsck's backup superblock, says that -b is the background check and names the -s to use" {
	mkimg "$IMG" 32M -b 1024
	run --separate-stderr "$FSCK" -b 8192 "$IMG"
	assert_failure 16
	assert_equal "$output" ""
	assert_equal "$stderr" "fsck.sufs: -b is the background check, and takes no block number; a backup superblock is given with -s
fsck.sufs: the superblock copy at block $((8192)) of $IMG: fsck.sufs -s 8192:1024 $IMG"
	# a block that holds no copy: how to write -s, no page of help
	run --separate-stderr "$FSCK" -b 100 "$IMG"
	assert_failure 16
	assert_equal "$stderr" "fsck.sufs: -b is the background check, and takes no block number; a backup superblock is given with -s
fsck.sufs: give it as -s BLOCK:BLOCKSIZE, or as a byte offset"
}

@test "fsck -fn puts one blank line before its last lines, when the last problem is in pass 5 too" {
	mkpop
	edit bit block "$(edit freeblock)" 1
	run "$FSCK" -fn "$IMG"
	assert_failure 4
	assert_output --partial "marked in use but used by nothing.  Free? no"
	# one blank line after the problem, none more before the warning
	[[ $output == *$'Free? no\n\n'"$IMG: ********** WARNING: file system still has errors **********"$'\n\n'"$IMG: "* ]] ||
		fail "not one blank line: $output"
	! grep -qzP '\n\n\n' <<<"$output" || fail "two blank lines in a row: $output"
}

@test "-C and -s values that are not a descriptor or a place are usage errors" {
	local v
	for v in x 1025 -1; do
		run --separate-stderr "$FSCK" -fn -C "$v" "$T/x"
		assert_failure 16
		assert_equal "$stderr" "fsck.sufs: -C: not a file descriptor: $v"
	done
	# BLOCK:BLOCKSIZE: a size of 1 KiB to 64 KiB, a power of two, and a
	# product that fits in 64 bits
	for v in 1:1000 1:512 1:131072 1:x x:1024 18446744073709551615:65536 0:1024 \
		"$(printf '1%.0s' $(seq 64))"; do
		run --separate-stderr "$FSCK" -fn -s "$v" "$T/x"
		assert_failure 16
		assert_equal "$stderr" "fsck.sufs: -s: not a byte offset or BLOCK:BLOCKSIZE: $v"
	done
}

@test "--help and --version exit 0" {
	run "$FSCK" --help
	assert_success
	assert_output --partial "Usage: fsck.sufs"
	run "$FSCK" --version
	assert_success
	assert_output --partial "fsck.sufs (sufs)"
	run "$FSCK" -V
	assert_success
	assert_output --partial "fsck.sufs (sufs)"
}

@test "a missing image exits 8" {
	run "$FSCK" -n "$T/missing"
	assert_failure 8
	assert_output --partial "No such file"
}

@test "a zero-length image exits 8" {
	: >"$IMG"
	run "$FSCK" -n "$IMG"
	assert_failure 8
	assert_output "fsck.sufs: $IMG: not a sufs file system: the image is 0 bytes, too small to hold a superblock at byte 1024"
}

@test "a superblock asked for past the end of the image is too small to hold, with --json too" {
	mkimg "$IMG"
	run "$FSCK" -n -s 0x1000000 "$IMG"
	assert_failure 8
	assert_output "fsck.sufs: $IMG: not a sufs file system: the image is 16777216 bytes, too small to hold a superblock at byte 16777216"
	run "$FSCK" -n --json -s 0x1000000 "$IMG"
	assert_failure 8
	python3 -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["error"] == "not a sufs file system: the image is 16777216 bytes, too small to hold a superblock at byte 16777216", r
' "$output"
}

@test "-s at a place that holds no superblock says so of that place" {
	mkimg "$IMG"
	run "$FSCK" -fn -s 1048576 "$IMG"
	assert_failure 8
	assert_output "fsck.sufs: $IMG: no sufs superblock at byte 1048576 (-s): bad magic number"
}

@test "an image that is not sufs exits 8" {
	head -c 1048576 /dev/urandom >"$IMG"
	run "$FSCK" -fy "$IMG"
	assert_failure 8
	assert_output --partial "not a sufs file system"
}

@test "a truncated image exits 8" {
	mkimg "$IMG"
	truncate -s 8M "$IMG"
	run "$FSCK" -fy "$IMG"
	assert_failure 8
	assert_output "fsck.sufs: $IMG: image is shorter than its superblock says (truncated)"
}

@test "the image's name is printed with its control bytes escaped" {
	local name=$T/$'a\033[1mb\nc' shown=$T/'a\x1b[1mb\nc'
	mkpop
	mv "$IMG" "$name"
	run "$FSCK" -n "$name"
	assert_success
	assert_output "$shown: clean, 30/1024 files, 120/4096 blocks"
	run "$FSCK" -fp "$name"
	assert_success
	assert_output "$shown: 30/1024 files, 120/4096 blocks"
	IMG=$name edit dset / big ino 900
	run "$FSCK" -fp "$name"
	assert_failure 4
	assert_line --index 0 "$shown: Entry 'big' in directory inode 2 names free inode 900."
	assert_line --index 1 "$shown: UNEXPECTED INCONSISTENCY; RUN fsck.sufs MANUALLY."
	run "$FSCK" -fL "$name"
	assert_failure 4
	assert_line "$shown: run a full check: fsck.sufs -f $shown"
	run "$FSCK" -fn -C 3 "$name" 3>"$T/progress"
	grep -qxF "5 1 1 $shown" "$T/progress"
	run "$FSCK" -n "$name.missing"
	assert_failure 8
	assert_output "fsck.sufs: $shown.missing: No such file or directory (opening the image)"
	# JSON has its own escapes
	run "$FSCK" -fn --json "$name"
	python3 -c '
import json, sys
assert json.loads(sys.argv[1])["image"] == sys.argv[2]
' "$output" "$name"
}

@test "--json reports every problem with its code and whether it was fixed" {
	mkpop
	edit iset /f1 links 9
	run "$FSCK" -fy --json "$IMG"
	assert_failure 1
	python3 -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["status"] == 1, r
p = r["problems"]
assert [(x["name"], x["code"], x["leak"], x["fixed"]) for x in p] == [("links_high", 0x404, True, True)], p
assert [x["pass"] for x in r["passes"]] == [0, 1, 2, 3, 4, 5], r["passes"]
' "$output"
}

@test "-v names pass 0, says in preen mode what it fixed, and ends with counts" {
	mkimg "$IMG"
	run "$FSCK" -fnv "$IMG"
	assert_success
	assert_output "Pass 0: superblock and group descriptors
Pass 1: inodes and block maps
Pass 2: directories
Pass 3: connectivity
Pass 4: reference counts
Pass 5: bitmaps and summaries
$IMG: 2/1024 files, 69/4096 blocks
$IMG: 1 directory; 0 problems (0 leaks), 0 fixed"
	mkpop
	edit iset /f1 links 9
	run "$FSCK" -fpv "$IMG"
	assert_failure 1
	assert_line "$IMG: Inode $(edit ino /f1) link count is 9, should be 2.  FIXED."
	assert_line --index 0 "Pass 0: superblock and group descriptors"
	assert_line "$IMG: 4 directories; 1 problem (1 leak), 1 fixed"
	edit iset /f1 links 9
	edit dset / big ino 900
	# the directories counted include the /lost+found made for /big
	run "$FSCK" -fyv "$IMG"
	assert_failure 1
	assert_line "$IMG: 5 directories; 3 problems (2 leaks), 3 fixed"
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "-C 0 without a terminal draws no bar and writes to no descriptor" {
	mkpop
	: >"$T/fd0"
	run --separate-stderr "$FSCK" -fn -C 0 "$IMG" 0<>"$T/fd0"
	assert_success
	assert_equal "$stderr" ""
	assert_line "$IMG: 30/1024 files, 120/4096 blocks"
	[ ! -s "$T/fd0" ]
}

@test "-C 0 on a terminal draws a bar of each pass that has one" {
	mkpop
	on_tty "$FSCK" -fn -C 0 "$IMG"
	assert_success
	assert_line "Pass 1: [########################################] 1024/1024"
	assert_line --index -1 "$IMG: 30/1024 files, 120/4096 blocks"
}

@test "-C FD writes progress numbers to FD" {
	mkpop
	run "$FSCK" -fn -C 3 "$IMG" 3>"$T/progress"
	assert_success
	grep -q "^1 1024 1024 $IMG\$" "$T/progress"
	grep -q "^5 1 1 $IMG\$" "$T/progress"
}

# ---- leak-only and preen ----------------------------------------------------

@test "-L repairs a leak" {
	mkpop
	edit iset /f1 links 9
	run "$FSCK" -fL "$IMG"
	assert_failure 1
	assert_output --partial "link count is 9, should be 2"
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "-L refuses anything worse than a leak and changes nothing" {
	mkpop
	edit iset /f1 links 9
	edit dset / big ino 900
	before=$(sha "$IMG")
	run "$FSCK" -fL "$IMG"
	assert_failure 4
	assert_output --partial "names free inode 900"
	assert_output --partial "nothing was changed"
	[ "$(sha "$IMG")" = "$before" ]
}

@test "-p fixes leaks silently" {
	mkpop
	edit iset /f1 links 9
	edit bit block "$(edit freeblock)" 1
	edit dset / big ino 0
	run "$FSCK" -fp "$IMG"
	assert_failure 1
	assert_output --regexp "^$IMG: [0-9]+/1024 files, [0-9]+/4096 blocks\$"
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "-p stops with UNEXPECTED INCONSISTENCY on what is not a leak" {
	mkpop
	edit dset / big ino 900
	run "$FSCK" -fp "$IMG"
	assert_failure 4
	# a blank line between the problem and the verdict, as e2fsck prints
	assert_output "$IMG: Entry 'big' in directory inode 2 names free inode 900.

$IMG: UNEXPECTED INCONSISTENCY; RUN fsck.sufs MANUALLY.
	(i.e., without -a or -p options)"
	run "$FSCK" -fn "$IMG"
	assert_failure 4
}

# ---- superblock ------------------------------------------------------------------

@test "a primary superblock with a bad checksum is replaced from its backup" {
	mkpop -g 1024
	edit sbbreak 40
	run "$FSCK" -n "$IMG"
	assert_failure 4
	assert_output --partial "using the backup at byte"
	run "$FSCK" -y "$IMG"
	assert_failure 1
	assert_output --partial "Rewrite the primary? yes"
	run "$FSCK" -fn "$IMG"
	assert_success
	refute_output --partial "backup"
}

@test "a zeroed primary superblock is found again from the default geometry" {
	mkimg "$IMG" 16M -b 1024
	edit sbzero
	run "$FSCK" -y "$IMG"
	assert_failure 1
	assert_output --partial "bad magic number"
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "a superblock whose checksum alone is bad, without a backup, is sealed again" {
	mkimg "$IMG"
	edit sbbreak 900
	run "$FSCK" -n "$IMG"
	assert_failure 4
	assert_output --partial "superblock checksum does not match, and there is no good backup"
	run "$FSCK" -y "$IMG"
	assert_failure 1
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "-s chooses a backup over a good primary, which the repair rewrites from it" {
	mkpop -b 1024
	run "$FSCK" -fn "$IMG"
	assert_success
	counts=${lines[-1]}
	run "$FSCK" -fy -s 8192:1024 "$IMG"
	assert_failure 1
	assert_line --index 0 "The superblock at byte 8388608 was chosen (-s) over a sound primary.  Rewrite the primary? yes"
	run "$FSCK" -fn "$IMG"
	assert_success
	assert_line "$counts"
}

@test "-s chooses a backup superblock by block number and block size" {
	mkimg "$IMG" 16M -b 1024
	edit sbzero
	run "$FSCK" -fy -s 8192:1024 "$IMG"
	assert_failure 1
	assert_output --partial "using the backup at byte 8388608"
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "unknown superblock flags are cleared" {
	mkimg "$IMG"
	edit sbset flags 0x81
	run "$FSCK" -y "$IMG"
	assert_failure 1
	assert_output --partial "Superblock field flags is 129, should be 1.  Fix? yes"
	run "$FSCK" -fn "$IMG"
	assert_success
}

# ---- pass 1: inodes and block maps ---------------------------------------------

@test "an inode with a stale checksum gets a new one" {
	damage_case iset /big size 100001 raw
	first_has "checksum does not match"
}

@test "a wrong block count is a leak and is fixed" {
	damage_case iset /big blocks 99
	first_has "block count is 99, should be 26"
}

@test "a block pointer outside the data area is cleared" {
	damage_case iset /big b2 99999
	first_has "block #2 points to 99999, outside the data area"
}

@test "a block mapped past the size is cleared" {
	damage_case iset /big size 4096
	first_has "past its size 4096"
}

@test "a block past the size that is marked free is no leak: -L changes nothing, -p stops" {
	mkpop
	edit iset /big size 4096
	edit bit block "$(edit iget /big b6)" 0
	before=$(sha "$IMG")
	run "$FSCK" -fL "$IMG"
	assert_failure 4
	assert_output --partial "past its size 4096, and that block is marked free"
	assert_output --partial "nothing was changed"
	[ "$(sha "$IMG")" = "$before" ]
	# preen fixes the block count (a leak), then stops
	run "$FSCK" -fp "$IMG"
	assert_failure 5
	assert_output --partial "UNEXPECTED INCONSISTENCY"
	run "$FSCK" -fy "$IMG"
	assert_failure 1
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "a block past the size that another file owns is no leak, whichever inode comes first" {
	# /f1's block in /big's tail, and /big's tail block in /f1's: one
	# claimant comes before the pointer past the size, one after
	mkpop
	edit iset /big size 4096
	edit iset /big b6 "$(edit iget /f1 b0)"
	run "$FSCK" -fL "$IMG"
	assert_failure 4
	assert_output --partial "past its size 4096, and that block is in use elsewhere"
	mkpop
	edit iset /f1 size 0
	edit iset /f1 b1 "$(edit iget /big b0)"
	run "$FSCK" -fL "$IMG"
	assert_failure 4
	assert_output --partial "past its size 0, and that block is in use elsewhere"
}

@test "a slow symlink whose target is NULs, or has bytes after it, is cleared" {
	mkpop
	"$DEBUG" -w -R "zap_block -f /longsl 0" "$IMG"
	run "$FSCK" -fn "$IMG"
	assert_failure 4
	assert_output --partial "is invalid (NUL in the target)"
	mkpop
	"$DEBUG" -w -R "zap_block -f /longsl 0 1000 1 0x41" "$IMG"
	run "$FSCK" -fy "$IMG"
	assert_failure 1
	assert_output --partial "is invalid (bytes after the target)"
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "a snapshot file no slot names (a crash while it was taken) is a leak that -p and -L remove" {
	for opt in -fp -fL; do
		mkpop
		echo "snapshot s1" | "$REPLAY" --crash-after-epoch 6 "$IMG" - 2>/dev/null || [ $? -eq 32 ]
		run "$DEBUG" -R "stat /.snap/s1" "$IMG"
		assert_success
		run "$FSCK" "$opt" "$IMG"
		assert_failure 1
		run "$FSCK" -fn "$IMG"
		assert_success
		run "$DEBUG" -R "ls /.snap" "$IMG"
		refute_line s1
		# and the name is free for a snapshot again
		run "$SNAP" create "$IMG" s1
		assert_success
	done
}

@test "an invalid file type clears the inode" {
	damage_case iset /f1 mode 0o170644
	first_has "invalid file type"
	first_has "names free inode"
}

@test "a fast symlink with a wrong size is cleared" {
	damage_case iset /sl size 0
	first_has "ymbolic link inode"
}

@test "a long symlink whose block pointer is bad is cleared" {
	damage_case iset /longsl b0 5
	first_has "block #0 points to 5, outside the data area"
	first_has "is invalid (no block)"
}

@test "a block pointer shared by two files is cloned" {
	mkpop
	edit iset /big b3 "$(edit iget /f1 b0)"
	run "$FSCK" -fy "$IMG"
	assert_failure 1
	assert_output --partial "is claimed more than once.  Clone? yes"
	run "$FSCK" -fn "$IMG"
	assert_success
	[ "$(edit iget /f1 b0)" != "$(edit iget /big b3)" ]
}

@test "a file that refuses a copy of a shared block is offered to be cleared instead" {
	mkpop
	edit iset /big b3 "$(edit iget /f1 b0)"
	start_fsck
	wait_for 'is claimed more than once\.  Clone<y>\? ?$'
	tmux send-keys -t fs n
	wait_for 'keeps blocks another inode claims too \(a copy was refused\)\.  Clear<y>\? ?$'
	tmux send-keys -t fs y
	# f1 (the later claimant) is cleared; its names go in pass 2
	wait_for "^Entry 'f1' in directory inode 2 names free inode [0-9]+\.  Clear<y>\? ?\$"
	tmux send-keys -t fs a
	wait_for '^EXITED 1$'
	screen | grep -q "^Entry 'hard' in directory inode [0-9]* names free inode"
	run "$FSCK" -fn "$IMG"
	assert_success
	run "$DEBUG" -R "ls /" "$IMG"
	assert_success
	assert_output --partial big
	refute_output --partial f1
}

@test "a file that refuses both a copy and clearing keeps sharing: exit 4" {
	mkpop
	edit iset /big b3 "$(edit iget /f1 b0)"
	start_fsck
	wait_for 'Clone<y>\? ?$'
	tmux send-keys -t fs n
	wait_for 'Clear<y>\? ?$'
	tmux send-keys -t fs nnnnnnnnnn  # and no to what pass 5 asks
	wait_for '^EXITED 4$'
	[ "$(edit iget /big b3)" = "$(edit iget /f1 b0)" ]
	run "$FSCK" -fn "$IMG"
	assert_failure 4
	assert_output --partial "is claimed more than once.  Clone? no"
	assert_output --partial "keeps blocks another inode claims too (a copy was refused).  Clear? no"
}

# ---- pass 2: directories ----------------------------------------------------------

@test "an entry pointing at a free inode is cleared, not counted a leak" {
	damage_case dset / f1 ino 900
	first_has "Entry 'f1' in directory inode 2 names free inode 900.  Clear? yes"
	first_has "link count is 2, should be 1"
}

@test "an entry with an inode number out of range is cleared" {
	damage_case dset / f1 ino 5000
	first_has "out of range"
}

@test "a directory block with a bad checksum gets a new one" {
	damage_case dcsum /d1
	first_has "block #0"
	first_has "checksum does not match"
}

@test "a wrong file type in an entry is fixed" {
	damage_case dset / big ftype 2
	first_has "has file type 2, should be 1"
}

@test "a second name for a directory, where its '..' does not point, is a leak" {
	# what a crash in the middle of a rename leaves: the name that '..'
	# confirms stays, the other goes (preen and leak-only fix it)
	mkpop
	edit dset / f1 ino "$(edit ino /d1/d2)"
	edit dset / f1 ftype 2
	run "$FSCK" -fn --json "$IMG"
	assert_output --partial '"dir_stale_name"'
	run "$FSCK" -fy "$IMG"
	assert_failure 1
	assert_output --partial "Entry 'f1' in directory inode 2 is a name of directory inode"
	assert_output --partial "left by a rename"
	run "$FSCK" -fn "$IMG"
	assert_success
	run "$DEBUG" -R "ls /d1" "$IMG"
	assert_output --partial "d2"
}

@test "a second name for a directory, where '..' names neither, is cleared" {
	mkpop
	edit dset / f1 ino "$(edit ino /d1/d2)"
	edit dset / f1 ftype 2
	edit dset /d1/d2 .. ino "$(edit ino /e)"
	run "$FSCK" -fy "$IMG"
	assert_failure 1
	assert_output --partial "second link to directory"
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "a malformed directory block is salvaged" {
	damage_case dset /e file5 reclen 3
	first_has "is malformed"
}

# ---- pass 3: connectivity ---------------------------------------------------------

@test "a detached directory goes to lost+found" {
	mkpop
	d1=$(edit ino /d1)
	edit dset / d1 ino 0
	run "$FSCK" -fy "$IMG"
	assert_failure 1
	assert_output --partial "Unattached directory inode $d1 ('..' is 2).  Connect to /lost+found? yes"
	run "$FSCK" -fn "$IMG"
	assert_success
	[ "$(edit ino "/lost+found/#$d1")" = "$d1" ]
	edit ino "/lost+found/#$d1/d2"
}

@test "a detached empty directory is a leak and is cleared" {
	damage_case dset /d1 d2 ino 0
	first_has "Unattached empty directory inode"
	first_has "link count is 3, should be 2"
}

@test "a directory loop unreachable from the root is broken into lost+found" {
	mkpop
	d1=$(edit ino /d1)
	edit dset /d1 hard ino "$d1"
	edit dset /d1 hard ftype 2
	edit dset / d1 ino 0
	run "$FSCK" -fy "$IMG"
	assert_failure 1
	assert_output --partial "Directory inode $d1 is in a loop unreachable from the root"
	run "$FSCK" -fn "$IMG"
	assert_success
	edit ino "/lost+found/#$d1/d2"
}

@test "a wrong '..' is fixed" {
	mkpop
	edit dset /d1/d2 .. ino "$(edit ino /e)"
	run "$FSCK" -fy "$IMG"
	assert_failure 1
	assert_output --partial "'..' in directory inode $(edit ino /d1/d2) is $(edit ino /e), should be $(edit ino /d1)"
	run "$FSCK" -fn "$IMG"
	assert_success
}

# ---- pass 4: reference counts -----------------------------------------------------

@test "a link count too high is a leak and is lowered" {
	damage_case iset /f1 links 5
	first_has "link count is 5, should be 2"
}

@test "a link count too low is raised" {
	damage_case iset /d1/hard links 1
	first_has "link count is 1, should be 2"
}

@test "an unattached file with data goes to lost+found" {
	mkpop
	big=$(edit ino /big)
	edit dset / big ino 0
	run "$FSCK" -fy "$IMG"
	assert_failure 1
	assert_output --partial "Unattached inode $big (size 100000).  Connect to /lost+found? yes"
	run "$FSCK" -fn "$IMG"
	assert_success
	[ "$(edit ino "/lost+found/#$big")" = "$big" ]
}

@test "an unattached file with a link count of 0 is cleared, not connected" {
	mkpop
	big=$(edit ino /big)
	edit iset /big links 0
	edit dset / big ino 0
	run "$FSCK" -fy "$IMG"
	assert_failure 1
	assert_output --partial "Unattached inode $big (size 100000).  Clear? yes"
	refute_output --partial "lost+found"
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "an unattached empty file is cleared" {
	mkpop
	edit iset /f1 size 0
	edit iset /f1 b0 0
	edit iset /f1 blocks 0
	edit dset / f1 ino 0
	edit dset /d1 hard ino 0
	run "$FSCK" -fy "$IMG"
	assert_failure 1
	assert_output --partial "Unattached zero-length inode"
	run "$FSCK" -fn "$IMG"
	assert_success
}

# ---- pass 5: bitmaps and summaries -------------------------------------------------

@test "a used block marked free is marked in use, not counted a leak" {
	damage_case 'bit block $(edit iget /f1 b0) 0'
	first_has "in use but marked free.  Mark in use? yes"
}

@test "a free block marked in use is a leak and is freed" {
	damage_case 'bit block $(edit freeblock) 1'
	first_has "marked in use but used by nothing.  Free? yes"
}

@test "a free inode marked in use is a leak and is freed" {
	damage_case bit inode 1000 1
	first_has "Inode 1000 marked in use but free.  Free? yes"
}

@test "an inode in use marked free is marked in use" {
	damage_case 'bit inode $(edit ino /big) 0'
	first_has "in use but marked free"
}

@test "wrong free counts in the summaries are fixed" {
	damage_case sbset free_blocks 7
	first_has "Superblock summary is wrong"
}

# ---- the manual page ----------------------------------------------------------------

# problem_rows: the rows of PROBLEMS in fsck.sufs(8) as libsufs's table
# makes them (check/problems.c, with the codes of sufs.h); with --page, the
# rows as the page has them.
problem_rows() {
	python3 - "$SUFS_SRCDIR" "$@" <<'EOF'
import re, sys

src = sys.argv[1]
if sys.argv[2:] == ["--page"]:
    page = open(src + "/man/fsck.sufs.8", encoding="utf-8").read()
    body = page.split("\n.SH PROBLEMS\n", 1)[1].split("\n.SH ", 1)[0]
    print(body[body.index(".TP\n"):])
    sys.exit(0)
codes = dict(re.findall(r"\b(SUFS_PR_\w+)\s*=\s*(0x[0-9a-fA-F]+)",
                        open(src + "/libsufs/sufs.h").read()))
table = open(src + "/libsufs/check/problems.c").read()
table = table[table.index("table[] = {"):]
STR = r'"(?:[^"\\]|\\.)*"'
ROW = re.compile(r"ROW\((\w+),\s*\"(\w+)\",\s*(\d+),\s*([\w |]+?),\s*(" + STR +
                 r"),\s*((?:" + STR + r"\s*)+)\)")
# the placeholders of check/problems.c, as the page's legend names them
ARG = {"i": "I", "j": "J", "d": "D", "b": "B", "B": "B", "I": "I",
       "n": "N", "m": "M", "o": "N", "s": "S", "t": "T"}
KNOWN = {"0", "LEAK", "SUFS_PR_LEAK", "SUFS_PR_PREEN_OK", "SUFS_PR_NO"}
rows = ROW.findall(table)
if len(rows) != table.count("ROW("):
    sys.exit("read %d rows of %d" % (len(rows), table.count("ROW(")))
for code, name, npass, flags, prompt, msg in rows:
    msg = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', msg))
    flags = set(re.findall(r"\w+", flags))
    if flags - KNOWN:
        sys.exit("%s: flags this test does not know: %s" % (name, flags - KNOWN))
    what = []
    if flags & {"LEAK", "SUFS_PR_LEAK"}:
        what.append("leak")
    if flags & {"LEAK", "SUFS_PR_PREEN_OK"}:
        what.append("preen")
    if "SUFS_PR_NO" in flags:
        what.append("default no")
    msg = msg[0].upper() + msg[1:] + "."
    msg = msg.replace("\\", "\\e").replace("'", "\\(aq")
    msg = re.sub(r"%(.)", lambda m: "\\fI" + ARG[m.group(1)] + "\\fR", msg)
    print(".TP")
    print('.BR %s " %s (pass %s; %s%s)"' % (codes[code].lower(), name, npass,
          "".join(w + "; " for w in [", ".join(what)] if what), prompt.strip('"')))
    print(msg)
EOF
}

@test "the problem table of fsck.sufs(8) is libsufs's table, row for row" {
	require_cmd python3
	problem_rows >"$T/library"
	problem_rows --page >"$T/page"
	# every code, and every code only once (a row missed by the reading
	# of the table would pass unseen otherwise)
	[ "$(grep -c '^\.BR 0x' "$T/library")" -eq "$(grep -c 'ROW(SUFS_PR_' "$SUFS_SRCDIR/libsufs/check/problems.c")" ]
	run diff -u "$T/page" "$T/library"
	assert_success
}

@test "the examples of fsck.sufs(8) run in order from an empty directory and print what the page shows" {
	require_cmd jq
	run_examples fsck.sufs.8
	run diff -u "$T/expected" "$T/actual"
	assert_success
}
