#!/usr/bin/env bats
# sufs-replay: every operation of the script language and the POSIX errors
# it reports, expectations, bad lines, the three write modes, --stats and
# --json, the random workload, simulated crashes and the I/O log.  Results
# are read back with sufs-debug and sufs-dump.

bats_require_minimum_version 1.5.0
load helper

setup() {
	export TZ=UTC
	export SOURCE_DATE_EPOCH=1700000000
	IMG=$T/fs.img
	mkimg "$IMG" 16M
}

# play SCRIPT-TEXT [OPTION...]: run the script (given as text) on $IMG,
# stdout and stderr apart.
play() {
	local text=$1
	shift
	printf '%s\n' "$text" >"$T/script"
	run --separate-stderr "$REPLAY" "$@" "$IMG" "$T/script"
}

# dbg COMMAND [IMAGE]: one sufs-debug command, stdout and stderr apart.
dbg() {
	run --separate-stderr "$DEBUG" -R "$1" "${2:-$IMG}"
}

# field PATH N: field N of PATH's line in the `ls -l` of its directory
# (1 inode, 2 mode, 3 links, 4 uid, 5 gid, 6 size).
field() {
	local dir=${1%/*} name=${1##*/}
	"$DEBUG" -R "ls -l ${dir:-/}" "$IMG" | awk -v name="$name" -v n="$2" '{
		rest = $0
		sub(/^.* [0-9][0-9]:[0-9][0-9] /, "", rest)
		sub(/ -> .*$/, "", rest)
		if (rest == name)
			print $n
	}'
}

# pattern SEED OFFSET LENGTH: the bytes `write` writes (sufs-replay(8)).
pattern() {
	python3 - "$@" <<'EOF'
import sys
M = (1 << 64) - 1
def mix64(z):
    z = (z + 0x9e3779b97f4a7c15) & M
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M
    return z ^ (z >> 31)
seed, off, n = (int(a) for a in sys.argv[1:4])
words = {}
out = bytearray()
for o in range(off, off + n):
    w = words.get(o >> 3)
    if w is None:
        w = words[o >> 3] = mix64((seed * 0x9e3779b97f4a7c15 + (o >> 3)) & M)
    out.append((w >> (8 * (o & 7))) & 0xff)
sys.stdout.buffer.write(out)
EOF
}

# tree IMAGE: every name in the image with its type and mode, link count,
# owner, size, time and, for regular files, a hash of the contents; sorted,
# one a line.  Inode numbers are left out, so that images whose inodes were
# allocated in another order compare equal.
tree() {
	python3 - "$DEBUG" "$1" "$T" <<'EOF'
import hashlib, os, re, subprocess, sys, tempfile
debug, img, tmp = sys.argv[1:4]
LINE = re.compile(r'^ *(\d+) (\S{10}) +(\d+) +(\d+) +(\d+) +(\d+, \d+|\d+) (\S+ \S+) (.*)$')
def debug_run(cmds):
    p = subprocess.run([debug, '-f', '-', img], input=('\n'.join(cmds) + '\n').encode(),
                       capture_output=True)
    if p.returncode:
        sys.exit('tree: sufs-debug: ' + p.stderr.decode(errors='replace'))
    return p.stdout.decode('utf-8', 'surrogateescape')
rows, files, level = [], [], [('', 2)]
while level:
    listing, k, nxt = debug_run(['ls -l <%d>' % ino for _, ino in level]), -1, []
    for line in listing.splitlines():
        ino, mode, links, uid, gid, size, when, name = LINE.match(line).groups()
        if name == '.':          # every listing starts with "."
            k += 1
            continue
        if name == '..':
            continue
        path = level[k][0] + '/' + name
        rows.append([path, mode, links, uid, gid, size, when])
        if mode[0] == 'd':
            nxt.append((path, int(ino)))
        elif mode[0] == '-':
            files.append((len(rows) - 1, int(ino)))
    level = nxt
dest = tempfile.mkdtemp(dir=tmp)
if files:
    debug_run(['dump <%d> "%s/%d"' % (ino, dest, i) for i, (_, ino) in enumerate(files)])
for i, (row, _) in enumerate(files):
    with open(os.path.join(dest, str(i)), 'rb') as f:
        rows[row].append(hashlib.sha256(f.read()).hexdigest()[:16])
for r in sorted(rows):
    print(' '.join(r))
EOF
}

# iolog LOG: "W-records blocks B-records" of an I/O log, checking its format.
iolog() {
	python3 - "$1" <<'EOF'
import struct, sys
d = open(sys.argv[1], 'rb').read()
assert d[:8] == b'SUFSIOLG', 'magic'
version, bs, size = struct.unpack_from('<IIQ', d, 8)
assert version == 1 and bs in (1024, 2048, 4096, 8192, 16384, 32768, 65536), 'header'
p, w, blocks, b = 24, 0, 0, 0
while p < len(d):
    t = d[p:p + 1]
    p += 1
    if t == b'B':
        b += 1
    elif t == b'W':
        blk, count = struct.unpack_from('<QI', d, p)
        p += 12 + count * bs
        assert count > 0 and p <= len(d), 'a truncated write record'
        w, blocks = w + 1, blocks + count
    else:
        sys.exit('iolog: bad record type %r at byte %d' % (t, p - 1))
print(w, blocks, b)
EOF
}

# apply_log LOG IMAGE [BLOCKS]: write the first BLOCKS block writes of the
# log (all of them by default) to IMAGE.
apply_log() {
	python3 - "$@" <<'EOF'
import struct, sys
d = open(sys.argv[1], 'rb').read()
limit = int(sys.argv[3]) if len(sys.argv) > 3 else None
bs = struct.unpack_from('<I', d, 12)[0]
p, done = 24, 0
with open(sys.argv[2], 'r+b') as f:
    while p < len(d) and (limit is None or done < limit):
        t = d[p:p + 1]
        p += 1
        if t == b'B':
            continue
        blk, count = struct.unpack_from('<QI', d, p)
        p += 12
        n = count if limit is None else min(count, limit - done)
        f.seek(blk * bs)
        f.write(d[p:p + n * bs])
        p += count * bs
        done += n
EOF
}

# json_vars: set j_KEY for every KEY of the JSON object in $output (true,
# false and null as those words), failing if it is not one.
json_vars() {
	local vars
	vars=$(python3 -c 'import json, shlex, sys
for k, v in json.loads(sys.argv[1]).items():
    v = "null" if v is None else str(v).lower() if isinstance(v, bool) else str(v)
    print("j_%s=%s" % (k, shlex.quote(v)))' "$output") || return 1
	eval "$vars"
}

# crash_point: "PHASE LINE" from the --stats output in $output: "open -",
# "script N", "close -", or "none -" when the run did not crash.
crash_point() {
	awk '/^Crashed:/ {
		if ($2 == "at") { print "script", $4 } else if ($2 == "while") { print "open -" }
		else { print "close -" }
		found = 1
	} END { if (!found) print "none -" }' <<<"$output"
}

# ---------------------------------------------------------------------------
# Options and exit statuses

@test "--help prints the usage and exits 0" {
	run "$REPLAY" --help
	assert_success
	assert_output --partial "Usage: sufs-replay [options] IMAGE SCRIPT|-"
	assert_output --partial "--crash-after-write N"
}

@test "--version prints the program and library version" {
	run "$REPLAY" --version
	assert_success
	assert_output --regexp '^sufs-replay \(sufs\) [0-9]+\.[0-9]+'
}

@test "usage errors exit 1 and write nothing" {
	local before
	before=$(sha "$IMG")
	run "$REPLAY"
	assert_failure 1
	run "$REPLAY" "$IMG"
	assert_failure 1
	assert_output --partial "no script given"
	run "$REPLAY" --mode fast "$IMG" -
	assert_failure 1
	assert_output --partial "invalid mode 'fast'"
	run "$REPLAY" --seed 3 "$IMG" -
	assert_failure 1
	run "$REPLAY" --print-script "$IMG" -
	assert_failure 1
	for o in "--mode sync" "--cache 1M" --stats --json "--iolog $T/log" "--crash-after-write 1"; do
		run --separate-stderr "$REPLAY" --print-script --random 3 $o "$IMG"
		assert_failure 1
		assert_equal "$output" ""
		assert_equal "${stderr%%$'\n'*}" "sufs-replay: --print-script runs nothing: no --mode, --cache, --stats, --iolog or crash point"
	done
	[ ! -e "$T/log" ]
	for o in "--jobs 2" "--subsets 3" "--crash-dir $T" "--max-reports 2"; do
		run --separate-stderr "$REPLAY" $o "$IMG" /dev/null
		assert_failure 1
		assert_equal "${stderr%%$'\n'*}" "sufs-replay: --subsets, --jobs, --crash-dir and --max-reports go with --crash-check"
	done
	cp "$IMG" "$T/before.img"
	run --separate-stderr "$REPLAY" --break-rule 1 "$IMG" /dev/null
	assert_failure 1
	assert_equal "${stderr%%$'\n'*}" "sufs-replay: --break-rule goes with --crash-check: on a plain run it would only write an image that a crash could corrupt"
	cmp "$IMG" "$T/before.img"
	run "$REPLAY" --crash-after-write 1 --crash-after-epoch 1 "$IMG" -
	assert_failure 1
	run "$REPLAY" --crash-after-write many "$IMG" -
	assert_failure 1
	run "$REPLAY" --random 5 "$IMG" extra
	assert_failure 1
	run "$REPLAY" --bogus "$IMG" -
	assert_failure 1
	[ "$(sha "$IMG")" = "$before" ]
}

@test "more usage errors: each message exact, exit 1, the image untouched" {
	local before
	before=$(sha "$IMG")
	bad() {
		local want=$1
		shift
		run --separate-stderr "$REPLAY" "$@" "$IMG" /dev/null
		assert_failure 1
		assert_equal "$output" ""
		assert_equal "${stderr%%$'\n'*}" "sufs-replay: $want"
	}
	bad "invalid cache size '0'" --cache 0
	bad "invalid cache size '12Q'" --cache 12Q
	bad "--crash-check and --crash-state go alone" --crash-state final --crash-check
	bad "--crash-check and --crash-state go alone" --crash-check --crash-state final
	bad "--crash-check and --crash-state go alone" --crash-check --crash-check
	bad "invalid value for --jobs: '0' (1 to 256)" --crash-check --jobs 0
	bad "invalid value for --jobs: '257' (1 to 256)" --crash-check --jobs 257
	bad "--quiet goes with --crash-check" -q
	bad "--quiet goes with --crash-check" --quiet --stats
	bad "--bgfsck goes with a workload run whole, or with --crash-check" \
		--bgfsck --crash-after-write 3
	bad "--bgfsck goes with a workload run whole, or with --crash-check" \
		--bgfsck --crash-after-epoch 1
	run --separate-stderr "$REPLAY" --bgfsck --print-script --random 3 "$IMG"
	assert_failure 1
	assert_equal "${stderr%%$'\n'*}" "sufs-replay: --bgfsck goes with a workload run whole, or with --crash-check"
	[ "$(sha "$IMG")" = "$before" ]
}

@test "--bgfsck --stats: the background check's row; worse than a leak: a warning, the image marked for a full check" {
	play 'create /f
write /f 0 5000 1
link /f /g'
	assert_success
	play 'create /h' --bgfsck --stats
	assert_success
	[ -z "$stderr" ]
	assert_output --regexp $'\nBackground check: +exit 0, 0 problems \\(0 leaks\\), 0 fixed, [0-9.]+ s$'
	run "$FSCK" -f -n "$IMG"
	assert_success
	# a link count too low is worse than a leak: the check reports it, fixes
	# nothing, and the run still ends well, the image marked for fsck -f
	"$DEBUG" -w -R "set_inode_field /f links 1" "$IMG"
	play 'create /i' --bgfsck --stats
	assert_success
	assert_equal "$stderr" "sufs-replay: warning: background check of $IMG: 1 problem worse than a leak; the file system is marked for a full check"
	assert_output --regexp $'\nBackground check: +exit 4, 1 problems \\(0 leaks\\), 0 fixed, [0-9.]+ s$'
	run "$DUMP" -h "$IMG"
	assert_output --regexp $'\nFilesystem flags: +needs_fsck\n'
	dbg 'ls /'
	assert_line i
}

@test "an image that cannot be opened exits 2" {
	printf 'sync\n' >"$T/script"
	run "$REPLAY" "$T/missing.img" "$T/script"
	assert_failure 2
	assert_output --partial "cannot open $T/missing.img"
	truncate -s 1M "$T/zeros.img"
	run "$REPLAY" "$T/zeros.img" "$T/script"
	assert_failure 2
}

@test "a script that cannot be read exits 8" {
	run "$REPLAY" "$IMG" "$T/no-such-script"
	assert_failure 8
	assert_output --partial "cannot read $T/no-such-script"
}

@test "a script that is a directory cannot be read: exit 8, the image closed clean" {
	mkdir "$T/dir"
	run --separate-stderr "$REPLAY" "$IMG" "$T/dir"
	assert_failure 8
	assert_equal "$stderr" "sufs-replay: reading $T/dir: Is a directory"
	run "$DUMP" -h "$IMG"
	assert_output --regexp 'Filesystem state: +clean'
}

@test "a successful run prints nothing and leaves the image clean" {
	play 'mkdir /a'
	assert_success
	assert_output ""
	[ -z "$stderr" ]
	run "$DUMP" -h "$IMG"
	assert_output --regexp 'Filesystem state: +clean'
}

@test "the script can come from standard input" {
	run "$REPLAY" "$IMG" - <<<'create /from-stdin'
	assert_success
	dbg "ls /"
	assert_line from-stdin
}

# ---------------------------------------------------------------------------
# The operations

@test "mkdir makes directories with the default or given mode" {
	play $'mkdir /a\nmkdir /a/b 0700\nmkdir a/c 2750'
	assert_success
	[ "$(field /a 2)" = drwxr-xr-x ]
	dbg "ls -l /a"
	assert_line --regexp ' [0-9]+ drwx------ +2 .* b$'
	assert_line --regexp ' [0-9]+ drwxr-s--- +2 .* c$'
	assert_line --regexp ' [0-9]+ drwxr-xr-x +4 .* \.$'
}

@test "create makes empty files owned by the caller" {
	play $'create /f\ncreate /g 0600'
	assert_success
	[ "$(field /f 2)" = -rw-r--r-- ]
	[ "$(field /g 2)" = -rw------- ]
	[ "$(field /f 6)" = 0 ]
	[ "$(field /f 4)" = "$(id -u)" ]
	[ "$(field /f 5)" = "$(id -g)" ]
}

@test "mknod makes devices, pipes and sockets" {
	play $'mknod /c c 1 3\nmknod /b b 8 1 0600\nmknod /p p\nmknod /s s 0640'
	assert_success
	dbg "ls -l /"
	assert_line --regexp ' crw-r--r-- +1 +[0-9]+ +[0-9]+ +1, 3 .* c$'
	assert_line --regexp ' brw------- +1 +[0-9]+ +[0-9]+ +8, 1 .* b$'
	assert_line --regexp ' prw-r--r-- .* p$'
	assert_line --regexp ' srw-r----- .* s$'
}

@test "write writes the documented bytes, leaving holes where nothing was written" {
	require_cmd python3
	play $'create /f\nwrite /f 0 10000 7\nwrite /f 1M 4K\ncreate /g\nwrite /g 3 5'
	assert_success
	[ "$(field /f 6)" = $((1048576 + 4096)) ]
	"$DEBUG" -R "cat /f" "$IMG" >"$T/got"
	{
		pattern 7 0 10000
		head -c $((1048576 - 10000)) /dev/zero
		pattern 0 1048576 4096
	} >"$T/want"
	cmp "$T/got" "$T/want"
	# a hole between: only the blocks written are mapped
	dbg "bmap /f 100"
	assert_output 0
	# byte o depends on the offset alone: a write at 3 is a slice of one at 0
	"$DEBUG" -R "cat /g" "$IMG" >"$T/got"
	{ head -c 3 /dev/zero; pattern 0 3 5; } >"$T/want"
	cmp "$T/got" "$T/want"
	pattern 0 0 8 | tail -c 5 | cmp - <(pattern 0 3 5)
}

@test "write follows a symbolic link and overwrites in place" {
	require_cmd python3
	play $'create /f\nwrite /f 0 8K 1\nsymlink f /l\nwrite /l 4K 100 2'
	assert_success
	"$DEBUG" -R "cat /f" "$IMG" >"$T/got"
	{ pattern 1 0 4096; pattern 2 4096 100; pattern 1 4196 $((8192 - 4196)); } >"$T/want"
	cmp "$T/got" "$T/want"
}

@test "truncate shrinks a file and grows it with a hole" {
	require_cmd python3
	play $'create /f\nwrite /f 0 40K 3\ntruncate /f 5000\ntruncate /f 1M'
	assert_success
	[ "$(field /f 6)" = 1048576 ]
	"$DEBUG" -R "cat /f" "$IMG" >"$T/got"
	{ pattern 3 0 5000; head -c $((1048576 - 5000)) /dev/zero; } >"$T/want"
	cmp "$T/got" "$T/want"
	dbg "blocks /f"
	[ "$(wc -w <<<"$output")" = 2 ]   # 5000 bytes: two blocks of 4096
}

@test "link adds a name and raises the link count" {
	play $'create /f\nmkdir /d\nlink /f /d/g\nsymlink nowhere /s\nlink /s /s2'
	assert_success
	[ "$(field /f 3)" = 2 ]
	[ "$(field /d/g 3)" = 2 ]
	[ "$(field /f 1)" = "$(field /d/g 1)" ]
	# a symbolic link is linked itself, not followed
	dbg "ls -l /"
	assert_line --regexp ' lrwxrwxrwx +2 .* s2 -> nowhere$'
	[ "$(field /s 1)" = "$(field /s2 1)" ]
}

@test "unlink removes a name and the file with its last one" {
	play $'create /f\nlink /f /g\nunlink /f'
	assert_success
	[ "$(field /g 3)" = 1 ]
	dbg "ls /"
	refute_line f
	play 'unlink /g'
	assert_success
	dbg "ls /"
	refute_line g
	run "$DUMP" -h "$IMG"
	assert_output --regexp 'Free inodes: +1022'
}

@test "rename moves names within and across directories, over files and empty directories" {
	play $'mkdir /a\nmkdir /b\ncreate /a/f\nrename /a/f /a/g
rename /a/g /b/g\ncreate /b/h\nrename /b/g /b/h
mkdir /a/sub\nmkdir /b/empty\nrename /a/sub /b/empty'
	assert_success
	dbg "ls /a"
	assert_output $'.\n..'
	dbg "ls /b"
	assert_equal "$(sort <<<"$output")" "$(printf '%s\n' . .. empty h)"
	# the directory moved: its ".." follows, and the link counts with it
	[ "$(field /a 3)" = 2 ]
	[ "$(field /b 3)" = 3 ]
	[ "$(field /b/empty/.. 1)" = "$(field /b 1)" ]
}

@test "rename of one name of a file onto another leaves both" {
	play $'create /f\nlink /f /g\nrename /f /g'
	assert_success
	dbg "ls /"
	assert_line f
	assert_line g
	[ "$(field /f 3)" = 2 ]
}

@test "symlink makes fast and slow links" {
	local long
	long=$(printf 'x%.0s' {1..200})
	play "symlink ../some/where /s
symlink $long /long"
	assert_success
	dbg "ls -l /"
	assert_line --regexp ' lrwxrwxrwx .* s -> \.\./some/where$'
	assert_line --regexp " lrwxrwxrwx .* long -> $long\$"
	dbg "blocks /long"
	[ "$(wc -w <<<"$output")" = 1 ]   # longer than fits in the inode
}

@test "rmdir removes an empty directory and lowers its parent's link count" {
	play $'mkdir /d\nmkdir /d/e\nrmdir /d/e'
	assert_success
	[ "$(field /d 3)" = 2 ]
	dbg "ls /d"
	assert_output $'.\n..'
}

@test "chmod, chown and utimes set what stat shows" {
	play $'create /f\nchmod 4751 /f\nchown 1234:567 /f\nutimes /f 1000.5 2000.000000001
create /g\nchown 42 /g\nchown :43 /g\nsymlink g /l\nchmod 0600 /l'
	assert_success
	dbg "stat /f"
	assert_line --partial "Mode:  4751"
	assert_line --regexp '^User: +1234 +Group: +567 '
	assert_line --regexp '^ +atime: 1000\.500000000 '
	assert_line --regexp '^ +mtime: 2000\.000000001 '
	dbg "stat /g"
	assert_line --regexp '^User: +42 +Group: +43 '
	# chmod follows a symbolic link
	assert_line --partial "Mode:  0600"
}

@test "utimes before 1970 keeps the sign of the fraction: -0.25 is a quarter of a second before" {
	play $'create /f\nutimes /f -0.25 -1.000000001'
	assert_success
	dbg "stat /f"
	assert_line --regexp '^ +atime: -0\.250000000 -- .* 23:59:59 1969$'
	assert_line --regexp '^ +mtime: -1\.000000001 -- .* 23:59:58 1969$'
	run "$DUMP" -i /f "$IMG"
	assert_line --regexp '^atime: +1969-12-31 23:59:59\.750000000 \+0000$'
	assert_line --regexp '^mtime: +1969-12-31 23:59:58\.999999999 \+0000$'
	play $'utimes /f -9223372036854775808.5 0'
	assert_failure 4
}

@test "a slash after the last name says it is a directory (ENOTDIR, EISDIR, ENOENT, EEXIST)" {
	play $'mkdir /d\ncreate /f\nsymlink f /l'
	assert_success
	while read -r want line; do
		play "$line"
		assert_failure 4
		[[ $stderr == *"($want)" ]] || { echo "$line: $stderr"; false; }
	done <<-'EOF'
	ENOTDIR unlink /f/
	ENOTDIR rename /f /g/
	ENOTDIR rename /f/ /g
	ENOTDIR create /f/
	EISDIR create /new/
	EISDIR unlink /d/
	ENOENT mknod /n/ p
	EEXIST mknod /f/ p
	ENOENT symlink f /s/
	ENOENT link /f /h/
	ENOENT unlink /none/
	EOF
	dbg "ls /"
	assert_output --partial "f"
	refute_output --partial "new"
	play $'mkdir /m/\nrename /m/ /n/\nrmdir /n/\nunlink /f\nunlink /l'
	assert_success
}

@test "a failing line of a megabyte is shown cut, and the reason in full" {
	python3 -c 'print("mkdir /" + "a" * 1000000)' >"$T/script"
	run --separate-stderr "$REPLAY" "$IMG" "$T/script"
	assert_failure 4
	[[ $stderr == "sufs-replay: $T/script:1: mkdir /aaaa"*"...: File name too long (ENAMETOOLONG)" ]]
	[ "${#stderr}" -lt 400 ]
}

@test "fsync and sync succeed on files and directories" {
	play $'mkdir /d\ncreate /d/f\nwrite /d/f 0 100K\nfsync /d/f\nfsync /d\nfsync /\nsync'
	assert_success
	[ "$(field /d/f 6)" = 102400 ]
}

@test "quoted names may hold blanks, quotes, escapes, UTF-8 and any byte" {
	play 'create "/with space"
create '"'"'/single \n quoted'"'"'
create "/quo\"te"
create /tab\there
create "/\x01ctl"
create "/ünïcødé"
create "/\xff\xfe"
create /\#hash'
	assert_success
	dbg "ls /"
	assert_line "with space"
	assert_line 'single \\n quoted'
	assert_line 'quo"te'
	assert_line 'tab\there'
	assert_line '\x01ctl'
	assert_line "ünïcødé"
	assert_line '\xff\xfe'
	assert_line '#hash'
}

@test "comments and blank lines are skipped" {
	play '# a comment

   # an indented one
mkdir /a   # after an operation
	'
	assert_success
	dbg "ls /"
	assert_output $'.\n..\na'
}

# ---------------------------------------------------------------------------
# POSIX errors, expected with !ERRNO

@test "ENOENT: a missing name, or a missing directory on the way" {
	play $'!ENOENT unlink /nope\n!ENOENT rmdir /nope\n!ENOENT create /no/dir
!ENOENT rename /nope /x\n!ENOENT link /nope /x\n!ENOENT write /nope 0 1
!ENOENT fsync /nope\n!ENOENT chmod 0644 /nope\n!ENOENT truncate /nope 0'
	assert_success
	dbg "ls /"
	assert_output $'.\n..'
}

@test "EEXIST: making a name that exists" {
	play $'mkdir /d\ncreate /f\n!EEXIST mkdir /d\n!EEXIST mkdir /f\n!EEXIST create /d
!EEXIST link /f /d\n!EEXIST symlink x /f\n!EEXIST mknod /f p'
	assert_success
	[ "$(field /f 3)" = 1 ]
	run "$DUMP" -h "$IMG"
	assert_output --regexp 'Free inodes: +1020'
}

@test "ENOTEMPTY: removing or renaming over a directory that is not empty" {
	play $'mkdir /d\ncreate /d/f\nmkdir /e\n!ENOTEMPTY rmdir /d\n!ENOTEMPTY rename /e /d'
	assert_success
	dbg "ls /d"
	assert_line f
}

@test "ENOTDIR: a file used as a directory" {
	play $'create /f\nmkdir /d\n!ENOTDIR create /f/x\n!ENOTDIR mkdir /f/x\n!ENOTDIR rmdir /f
!ENOTDIR rename /d /f\n!ENOTDIR unlink /f/x'
	assert_success
}

@test "EISDIR: a directory used as a file" {
	play $'mkdir /d\ncreate /f\n!EISDIR unlink /d\n!EISDIR write /d 0 1\n!EISDIR truncate /d 0
!EISDIR rename /f /d'
	assert_success
	[ "$(field /f 3)" = 1 ]
}

@test "EPERM: a hard link to a directory" {
	play $'mkdir /d\n!EPERM link /d /e'
	assert_success
}

@test "EINVAL: moving a directory into itself" {
	play $'mkdir /a\nmkdir /a/b\nmkdir /a/b/c\n!EINVAL rename /a /a/b/c/a\n!EINVAL rename /a /a/x
!EINVAL rename /a/b /a/b/c/d'
	assert_success
	dbg "ls /a/b/c"
	assert_output $'.\n..'
}

@test "ENAMETOOLONG: a name of 256 bytes, while 255 are fine" {
	local n255 n256
	n255=$(printf 'n%.0s' {1..255})
	n256=${n255}n
	play "create /$n255
!ENAMETOOLONG create /$n256
!ENAMETOOLONG mkdir /$n256
!ENAMETOOLONG rename /$n255 /$n256"
	assert_success
	dbg "ls /"
	assert_line "$n255"
}

@test "ENAMETOOLONG: a path of 4096 bytes, also where it names what is made or removed" {
	local p
	# "/", then 2,046 "./", then "a/b": 4,096 bytes with the NUL that PATH_MAX counts
	p=/$(printf './%.0s' {1..2046})a/b
	[ ${#p} = 4096 ]
	play "mkdir /a
!ENAMETOOLONG mkdir $p
!ENAMETOOLONG create $p
!ENAMETOOLONG symlink x $p
!ENAMETOOLONG mknod $p p
!ENAMETOOLONG link /a $p
mkdir /a/b
!ENAMETOOLONG rmdir $p
!ENAMETOOLONG unlink $p
!ENAMETOOLONG rename $p /c
!ENAMETOOLONG rename /a/b $p
!ENAMETOOLONG chmod 0700 $p
rmdir ${p:1}"
	assert_success
	dbg "ls /a"
	assert_output $'.\n..'
}

@test "the root named as the last component: EEXIST to make it, EISDIR to unlink it, EBUSY to remove or move it" {
	play $'create /f
!EEXIST mkdir /\n!EEXIST create /\n!EEXIST symlink x //\n!EEXIST mknod / p\n!EEXIST link /f /
!EISDIR unlink /\n!EBUSY rmdir /\n!EBUSY rmdir ///\n!EBUSY rename / /x\n!EBUSY rename /f /
!EBUSY rmdir /.\nmkdir /d\n!EINVAL rmdir /d/.'
	assert_success
	dbg "ls /"
	assert_output $'.\n..\nf\nd'
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "EMLINK: no link, subdirectory or moved-in directory past the link limit" {
	# 65,000 names would take minutes: the counts are set to one short
	play $'create /f\nmkdir /d\nmkdir /m'
	assert_success
	run "$DEBUG" -w -f - "$IMG" <<'EOF2'
set_inode_field /f links 64999
set_inode_field /d links 64999
EOF2
	assert_success
	play $'link /f /g\n!EMLINK link /f /h\nmkdir /d/last\n!EMLINK mkdir /d/more
!EMLINK rename /m /d/m\nsync'
	assert_success
	[ "$(field /f 3)" = 65000 ]
	[ "$(field /d 3)" = 65000 ]
	dbg "ls /d"
	assert_line last
	refute_line more
	refute_line m
	dbg "ls /"
	assert_line g
	refute_line h
	assert_line m
	# and a line that expects success reports the error by its name
	play 'link /f /h'
	assert_failure 4
	[[ $stderr == *":1: link /f /h: "*"(EMLINK)"* ]] || fail "stderr: $stderr"
}

@test "ENOSPC: a tiny image fills up, and what was written stays usable" {
	mkimg "$IMG" 256K -b 1024
	play $'create /big\n!ENOSPC write /big 0 1M\ncreate /small\nunlink /big\nsync
write /small 0 10K 4'
	assert_success
	[ "$(field /small 6)" = 10240 ]
	mkimg "$IMG" 1M -N 16
	play "$(for i in $(seq 1 14); do echo "create /f$i"; done)
!ENOSPC create /f15
!ENOSPC mkdir /d"
	assert_success
}

@test "an expected error that does not come fails the line" {
	play $'mkdir /d\n!ENOENT mkdir /e'
	assert_failure 4
	assert_equal "$stderr" "sufs-replay: $T/script:2: !ENOENT mkdir /e: succeeded, but ENOENT was expected"
}

@test "another error than the one expected fails the line, naming both" {
	play $'mkdir /d\ncreate /d/f\n!ENOENT rmdir /d'
	assert_failure 4
	assert_equal "$stderr" "sufs-replay: $T/script:3: !ENOENT rmdir /d: Directory not empty (ENOTEMPTY), but ENOENT was expected"
}

# ---------------------------------------------------------------------------
# Bad lines and failed operations

@test "a refused operation stops the run with the line, the operation and the error" {
	play $'mkdir /a\nmkdir /b\nunlink /nope\nmkdir /c'
	assert_failure 4
	assert_equal "$stderr" "sufs-replay: $T/script:3: unlink /nope: No such file or directory (ENOENT)"
	# what came before is kept, cleanly; nothing after ran
	dbg "ls /"
	assert_output $'.\n..\na\nb'
	run "$DUMP" -h "$IMG"
	assert_output --regexp 'Filesystem state: +clean'
}

@test "numbers are decimal whatever zeros lead, or hex after 0x for ids" {
	play $'create /f\nwrite /f 010 1\nchown 010:0x10 /f'
	assert_success
	[ "$(field /f 6)" = 11 ]
	[ "$(field /f 4)" = 10 ]
	[ "$(field /f 5)" = 16 ]
}

@test "\\xHH takes its hex digits in either case" {
	play 'mkdir "/\x4A\x4b\x6C\x6d"'
	assert_success
	dbg "ls /"
	assert_output $'.\n..\nJKlm'
}

@test "an image's or a script's name is shown with escapes, never a control byte raw" {
	run --separate-stderr "$REPLAY" --random 3 "$T/e"$'\033'"[1mx"
	assert_failure 2
	assert_equal "$stderr" "sufs-replay: cannot open $T/e\\x1b[1mx: No such file or directory"
	printf 'bogus\n' >"$T/s"$'\033'"c"
	run --separate-stderr "$REPLAY" "$IMG" "$T/s"$'\033'"c"
	assert_failure 4
	assert_equal "$stderr" "sufs-replay: $T/s\\x1bc:1: unknown operation 'bogus'"
}

@test "output that cannot be written is exit status 8" {
	[ -w /dev/full ] || skip "no /dev/full"
	printf 'mkdir /q\n' >"$T/script"
	run sh -c '"$@" >/dev/full' sh "$REPLAY" --stats "$IMG" "$T/script"
	assert_failure 8
	assert_output --partial "sufs-replay: writing the output: No space left on device"
	run sh -c '"$@" >/dev/full' sh "$REPLAY" --print-script --random 10 "$IMG"
	assert_failure 8
}

@test "bad lines report SCRIPT:LINE and do nothing" {
	local line
	while IFS='|' read -r line want; do
		printf '# first\n%s\nmkdir /after\n' "$line" >"$T/script"
		run --separate-stderr "$REPLAY" "$IMG" "$T/script"
		assert_failure 4
		assert_equal "$stderr" "sufs-replay: $T/script:2: $want"
	done <<'EOF'
mkdri /a|unknown operation 'mkdri'
mkdir|mkdir: wrong number of arguments (usage: mkdir PATH [MODE])
mkdir /a 0755 extra|mkdir: wrong number of arguments (usage: mkdir PATH [MODE])
mkdir /a 0789|mkdir: bad mode 0789
write /f 0 12Q|write: bad length 12Q
write /f -1 1|write: bad offset -1
truncate /f|truncate: wrong number of arguments (usage: truncate PATH SIZE)
mknod /n c 1|mknod: wrong number of arguments (usage: mknod PATH c|b MAJOR MINOR [MODE])
mknod /n p 1 2|mknod: wrong number of arguments (usage: mknod PATH p|s [MODE])
mknod /n x|mknod: bad type (c, b, p or s) x
chown a:b /f|chown: bad owner (UID:GID) a:b
utimes /f 1.1234567890 0|utimes: bad access time 1.1234567890
utimes /f 1 x|utimes: bad modification time x
utimes /f .5 0|utimes: bad access time .5
utimes /f - 0|utimes: bad access time -
utimes /f 99999999999999999999 0|utimes: bad access time 99999999999999999999
utimes /f 1.x 0|utimes: bad access time 1.x
utimes /f 1. 0|utimes: bad access time 1.
mkdir /a 077777|mkdir: bad mode 077777
mkdir /a ""|mkdir: bad mode ""
chmod 10000 /f|chmod: bad mode 10000
chmod 8 /f|chmod: bad mode 8
create /f 9|create: bad mode 9
chown 12345678901234567 /f|chown: bad owner (UID:GID) 12345678901234567
chown 1:x /f|chown: bad owner (UID:GID) 1:x
chown : /f|chown: bad owner (UID:GID) :
chown "" /f|chown: bad owner (UID:GID) ""
write /f 0 1 x|write: bad seed x
write /f 18446744073709551615 1|write /f 18446744073709551615 1: File too large (EFBIG)
mknod /n c x 1|mknod: bad major number x
mknod /n c 1 y|mknod: bad minor number y
truncate /f x|truncate: bad size x
sync now|sync: wrong number of arguments (usage: sync)
!EWHAT mkdir /a|unknown error name '!EWHAT'
!ENOENT|!ENOENT: no operation follows
mkdir "/a|unterminated quote
mkdir /a\|a backslash ends the line
mkdir "/\x00"|\x00: a NUL byte cannot be in a word
mkdir "/\x4"|\x needs two hex digits
mkdir "/\xZZ"|\x needs two hex digits
EOF
	# control bytes are shown escaped; a NUL byte would hide the rest of
	# its line from the parser, and is refused
	while IFS='|' read -r line want; do
		printf "# first\n$line\nmkdir /after\n" >"$T/script"
		run --separate-stderr "$REPLAY" "$IMG" "$T/script"
		assert_failure 4
		assert_equal "$stderr" "sufs-replay: $T/script:2: $want"
		run --separate-stderr "$REPLAY" --crash-check=sample:1 "$IMG" "$T/script"
		assert_failure 4
		assert_equal "$stderr" "sufs-replay: $T/script:2: $want"
	done <<'EOF'
renm\033ae /a|unknown operation "renm\x1bae"
!E\033[31m mkdir /a|unknown error name "!E\x1b[31m"
mkdir /a\000 junk junk|a NUL byte in the line
EOF
	dbg "ls /"
	assert_output $'.\n..'
}

# ---------------------------------------------------------------------------
# Write modes

# A script that uses every operation, for comparing modes.
every_op='mkdir /d
mkdir /d/e 0700
create /d/f
write /d/f 0 100K 1
write /d/f 2M 10K 2
create "/d/with space" 0600
mknod /d/p p
mknod /d/s s
symlink ../d/f /l
link /d/f /d/hard
rename /d/hard /hard
create /g
write /g 0 20K 3
truncate /g 5000
fsync /g
chmod 0640 /g
chown 7:8 /g
utimes /g 1000 2000.5
mkdir /x
mkdir /x/y
rename /x /d/e/x
create /gone
unlink /gone
mkdir /gonedir
rmdir /gonedir
sync
write /d/f 50K 100K 4'

@test "the three write modes make the same tree and record the mode" {
	require_cmd python3
	local mode
	for mode in softdep sync async; do
		mkimg "$T/$mode.img" 16M
		printf '%s\n' "$every_op" >"$T/script"
		run "$REPLAY" --mode "$mode" "$T/$mode.img" "$T/script"
		assert_success
		run "$DUMP" -h "$T/$mode.img"
		assert_output --regexp "Write mode: +$mode"
		tree "$T/$mode.img" >"$T/$mode.tree"
	done
	[ "$(wc -l <"$T/softdep.tree")" = 11 ]
	diff "$T/softdep.tree" "$T/sync.tree"
	diff "$T/softdep.tree" "$T/async.tree"
}

@test "the three write modes make the same tree from a random workload" {
	require_cmd python3
	local mode
	"$REPLAY" --random 400 --seed 5 --print-script "$IMG" >"$T/script"
	for mode in softdep sync async; do
		cp "$IMG" "$T/$mode.img"
		run "$REPLAY" --mode "$mode" "$T/$mode.img" "$T/script"
		assert_success
		tree "$T/$mode.img" >"$T/$mode.tree"
	done
	diff "$T/softdep.tree" "$T/sync.tree"
	diff "$T/softdep.tree" "$T/async.tree"
}

# mix_epochs KEY [bench/mix options]: bench/mix at 500 and 5,000
# transactions, each run with everything pending before the final sync (a
# cache that holds it all) and checked by fsck; sets epochs to the JSON
# counter KEY of the two runs.
mix_epochs() {
	local key=$1 n v
	shift
	epochs=()
	for n in 500 5000; do
		"$SUFS_SRCDIR/bench/mix" --files "$n" --seed 3 "$@" >"$T/mix"
		mkimg "$T/m.img" 2G
		run "$REPLAY" --cache 2G --json "$T/m.img" "$T/mix"
		assert_success
		json_vars
		v=j_$key
		epochs+=("${!v}")
		run "$FSCK" -fn "$T/m.img"
		assert_success
	done
	echo "epochs: ${epochs[*]}"
}

# The drain's bound (doc/ARCHITECTURE.md): a sync of a mix of creates,
# writes, renames (across and within directories, over files) and unlinks
# takes no more epochs than the longest chain one operation needs (six
# links, seven with the operation's directory made in the same sync), with
# 500 transactions pending or 5,000 (6 and 6 today).  Before the bound,
# 500 took 23 epochs and 5,000 took 46; with the drain that held a block
# an epoch even when a longest chain needed it, 9 and 8.
@test "a sync takes as many epochs after 5,000 transactions as after 500: the drain's bound" {
	require_cmd python3
	local epochs
	mix_epochs epochs
	[ "${epochs[0]}" -le 7 ]
	[ "${epochs[1]}" -le 7 ]
}

# The same with directories made, moved with what they hold, and removed
# (bench/mix --dirs): the final sync's epochs (line_epochs_max) stay within
# the longest chain of a move, eight links and one a level above the new
# parent (the mix's are one below a top directory made in the same sync:
# two more), 9 and 9 today (9 at 8,000 and at 50,000 transactions,
# bench/drain).  Before directories' link counts became counters, 15 and
# 22; before a second move settled the first, 5,000 took 76; with the
# drain before this one, 13.
@test "a sync takes as many epochs after 5,000 transactions with directories moved as after 500" {
	require_cmd python3
	local epochs
	mix_epochs line_epochs_max --dirs
	[ "${epochs[0]}" -le 10 ]
	[ "${epochs[1]}" -le 10 ]
}

@test "renaming a directory again before its last rename is on disk writes that rename first" {
	require_cmd python3
	play $'mkdir /a\nmkdir /b\nmkdir /c\nmkdir /a/D\ncreate /a/D/f\nsync\nrename /a/D /b/D\nrename /b/D /c/D\nrename /c/D /a/D2\nrename /a/D2 /a/D3\nsync\nrename /a/D3 /a/D4' --json
	assert_success
	json_vars
	# the second and third moves and the rename in place after them each
	# settle the rename before; the last, after a sync, has none pending
	[ "$j_moves_settled" = 3 ]
	run "$FSCK" -fn "$IMG"
	assert_success
	run "$DEBUG" -R "ls /a" "$IMG"
	assert_output --partial D4
}

@test "sync mode writes and barriers more than softdep, async less" {
	require_cmd python3
	local mode
	for mode in softdep sync async; do
		mkimg "$T/$mode.img" 16M
		printf '%s\n' "$every_op" >"$T/script"
		run "$REPLAY" --json --mode "$mode" "$T/$mode.img" "$T/script"
		assert_success
		json_vars
		eval "${mode}_writes=$j_block_writes ${mode}_barriers=$j_barriers"
	done
	[ "$sync_barriers" -gt "$softdep_barriers" ]
	[ "$softdep_barriers" -gt "$async_barriers" ]
	[ "$sync_writes" -gt "$softdep_writes" ]
	[ "$softdep_writes" -ge "$async_writes" ]
}

# ---------------------------------------------------------------------------
# --stats and --json

@test "--stats prints every counter after the run" {
	play "$every_op" --stats
	assert_success
	for label in "Write mode" Operations "Block writes" "Write calls" Barriers Epochs \
		"Most epochs of a line" "Moves settled" \
		"Block reads" "Updates created" "Updates merged" "Updates undone" "Waits made" \
		"Files forgotten" "Peak pending updates" "Peak dependency bytes" "Peak undo bytes" \
		"Peak dirty bytes" "Peak cache bytes" "Dependency bytes / cache" \
		"Undo bytes / dirty bytes" "Wall time"; do
		assert_line --regexp "^$label: +[0-9a-z.]"
	done
	assert_line --regexp '^Write mode: +softdep$'
	assert_line --regexp '^Operations: +27$'
}

@test "--json counts the waits made between updates: none in async mode" {
	require_cmd python3
	cp "$IMG" "$T/async.img"
	# the name waits for its inode, the inode for its bitmap bit; the
	# data's pointer for the data and its bit
	play $'mkdir /d\ncreate /d/f\nwrite /d/f 0 8K 1' --json
	assert_success
	json_vars
	[ "$j_waits" -ge 4 ]
	[ "$j_waits" -le $((2 * j_updates)) ]
	IMG=$T/async.img play $'mkdir /d\ncreate /d/f\nwrite /d/f 0 8K 1' --json --mode async
	assert_success
	json_vars
	[ "$j_waits" = 0 ]
}

@test "a file removed before it reached the disk is forgotten: its data is never written" {
	require_cmd python3
	cp "$IMG" "$T/kept.img"
	play $'mkdir /d\nsync\ncreate /d/f\nwrite /d/f 0 400K 1\nunlink /d/f' --json
	assert_success
	json_vars
	[ "$j_forgotten" = 1 ]
	local forgot=$j_block_writes
	# the same file, on disk before it goes: written, then freed by the rules
	IMG=$T/kept.img play $'mkdir /d\nsync\ncreate /d/f\nwrite /d/f 0 400K 1\nsync\nunlink /d/f' --json
	assert_success
	json_vars
	[ "$j_forgotten" = 0 ]
	[ "$j_block_writes" -ge $((forgot + 100)) ]
	"$FSCK" -fn "$IMG"
	"$FSCK" -fn "$T/kept.img"
}

@test "--json prints one object that python3 -m json.tool accepts" {
	require_cmd python3
	play "$every_op" --json --mode sync
	assert_success
	python3 -m json.tool <<<"$output" >/dev/null
	json_vars
	[ "$j_mode" = sync ]
	[ "$j_operations" = 27 ]
	[ "$j_crashed" = false ]
	[ "$j_crash_phase" = null ]
	[ "$j_crash_line" = null ]
	[ "$j_block_size" = 4096 ]
	[ "$j_block_writes" -ge "$j_write_calls" ]
	[ "$j_write_calls" -gt 0 ]
	[ "$j_updates" -gt 0 ]
	[ "$j_peak_cache_bytes" -gt 0 ]
	[ "$j_peak_dirty_bytes" -le "$j_peak_cache_bytes" ]
	python3 -c 'import json, sys
d = json.loads(sys.argv[1])
assert abs(d["dep_per_cache"] - d["peak_dep_bytes"] / d["peak_cache_bytes"]) < 1e-5
assert d["undo_per_dirty"] is None or d["peak_dirty_bytes"] > 0
assert d["seconds"] >= 0' "$output"
}

# ---------------------------------------------------------------------------
# The random workload

@test "--random --print-script is the same for the same seed, and only reads the image" {
	local before
	before=$(sha "$IMG")
	run "$REPLAY" --random 300 --seed 42 --print-script "$IMG"
	assert_success
	first=$output
	[ "$(grep -c . <<<"$first")" = 301 ]
	run "$REPLAY" --random 300 --seed 42 --print-script "$IMG"
	assert_equal "$output" "$first"
	run "$REPLAY" --random 300 --seed 43 --print-script "$IMG"
	[ "$output" != "$first" ]
	[ "$(sha "$IMG")" = "$before" ]
}

@test "--random uses every operation and some expected errors" {
	run "$REPLAY" --random 2000 --seed 1 --print-script "$IMG"
	assert_success
	for op in mkdir create mknod write truncate link unlink rename symlink rmdir \
		chmod chown utimes fsync sync; do
		grep -Eq "^(![A-Z]+ )?$op( |$)" <<<"$output" || fail "no $op in the workload"
	done
	for err in EEXIST ENOENT ENOTDIR EISDIR ENOTEMPTY EINVAL ENAMETOOLONG; do
		grep -q "^!$err " <<<"$output" || fail "no !$err in the workload"
	done
	grep -q '^create "' <<<"$output"   # a name that needs quotes
}

@test "--random runs clean in every mode, and its printed script replays to the same tree" {
	require_cmd python3
	local mode
	for mode in softdep sync async; do
		cp "$IMG" "$T/r-$mode.img"
		run "$REPLAY" --mode "$mode" --random 1500 --seed 7 "$T/r-$mode.img"
		assert_success
	done
	"$REPLAY" --random 1500 --seed 7 --print-script "$IMG" >"$T/script"
	cp "$IMG" "$T/s.img"
	run "$REPLAY" "$T/s.img" "$T/script"
	assert_success
	cmp "$T/r-softdep.img" "$T/s.img" ||
		diff <(tree "$T/r-softdep.img") <(tree "$T/s.img")
}

@test "--random starts from the tree in the image" {
	play $'mkdir /old\ncreate /old/file\nwrite /old/file 0 5K'
	assert_success
	run "$REPLAY" --random 400 --seed 2 --print-script "$IMG"
	assert_success
	grep -q ' /old/file' <<<"$output"
	run "$REPLAY" --random 400 --seed 2 "$IMG"
	assert_success
}

@test "--random on a tree of every kind of node, a file past 8 MiB and the names it would pick: clean, and its script replays the same" {
	local p n
	{
		printf '%s\n' "mknod /c c 1 3" "mknod /b b 8 0" "mknod /so s" "mknod /fifo p" \
			"create /big" "truncate /big 100M" "write /big 50M 10K 1"
		# every fresh name of the root the workload would make first
		for p in f d n s h r m; do
			for n in $(seq 1 20); do
				echo "create /$p$n"
			done
		done
	} >"$T/pre"
	run "$REPLAY" "$IMG" "$T/pre"
	assert_success
	cp "$IMG" "$T/s.img"
	run --separate-stderr "$REPLAY" --random 300 --seed 4 --print-script "$IMG"
	assert_success
	printf '%s\n' "$output" >"$T/script"
	# the fresh names are new: no line expects EEXIST of a name the tree had
	! grep -Eq '^(create|mkdir|mknod|symlink [^ ]*) /[fdnshrm]([1-9]|1[0-9]|20)( |$)' "$T/script"
	run "$REPLAY" --random 300 --seed 4 "$IMG"
	assert_success
	run "$REPLAY" "$T/s.img" "$T/script"
	assert_success
	# the same image but for the superblock's time of mounting (the real
	# clock's), in the first block (one group: no backup superblock)
	cmp <(tail -c +4097 "$IMG") <(tail -c +4097 "$T/s.img")
	run "$FSCK" -f -n "$IMG"
	assert_success
}

@test "--cache: a small cache writes back more often; under 64 blocks it is 64 blocks" {
	local i stats=()
	mkimg "$T/orig.img" 4M
	printf '%s\n' "mkdir /a" "create /a/f" "write /a/f 0 300K 1" "mkdir /b" "create /b/g" \
		"write /b/g 0 200K 2" "unlink /a/f" >"$T/script"
	for c in "" "--cache 1K" "--cache 256K"; do
		cp "$T/orig.img" "$IMG"
		run --separate-stderr "$REPLAY" --stats $c "$IMG" "$T/script"
		assert_success
		stats+=("$(grep -v '^Wall time:' <<<"$output")")
		run "$FSCK" -f -n "$IMG"
		assert_success
		[ "$(field /b/g 6)" = 204800 ]
	done
	# 1K and 256K (64 blocks of 4 KiB) are the same cache
	assert_equal "${stats[1]}" "${stats[2]}"
	epochs() { sed -n 's/^Epochs: *//p' <<<"$1"; }
	peak() { sed -n 's/^Peak cache bytes: *//p' <<<"$1"; }
	[ "$(epochs "${stats[1]}")" -gt "$(epochs "${stats[0]}")" ]
	[ "$(peak "${stats[1]}")" -le 262144 ]
	[ "$(peak "${stats[0]}")" -gt 262144 ]
	run --separate-stderr "$REPLAY" --cache 0 "$IMG" "$T/script"
	assert_failure 1
}

@test "--random: an image that cannot be opened exits 2, a tree that cannot be read exits 16" {
	run --separate-stderr "$REPLAY" --print-script --random 3 "$T/missing.img"
	assert_failure 2
	assert_output ""
	assert_equal "$stderr" "sufs-replay: cannot open $T/missing.img: No such file or directory"
	play $'mkdir /a\ncreate /a/f'
	assert_success
	"$DEBUG" -w -R "set_inode_field /a size 100" "$IMG"   # not whole blocks
	for o in --print-script ""; do
		run --separate-stderr "$REPLAY" --random 3 $o "$IMG"
		assert_failure 16
		assert_output ""
		assert_equal "$stderr" "sufs-replay: reading the tree of $IMG: corrupt metadata"
	done
}

@test "--random fills a small image without running out of space" {
	mkimg "$IMG" 2M -b 1024
	run "$REPLAY" --random 3000 --seed 11 "$IMG"
	assert_success
}

# ---------------------------------------------------------------------------
# Crashes

@test "on a terminal a bar shows the lines run: of the script's, of --random's, a count from a pipe" {
	{
		echo "mkdir /d"
		for i in $(seq 100); do echo "create /d/f$i"; echo "write /d/f$i 0 100"; done
	} >"$T/script"
	cp "$IMG" "$T/copy.img"
	on_tty "$REPLAY" "$IMG" "$T/script"
	assert_success
	assert_line --index 0 "Running: [############                            ] 64/201"
	assert_line --index -1 "Running: [########################################] 201/201"
	on_tty bash -c 'cat "$1" | "$2" "$3" -' _ "$T/script" "$REPLAY" "$T/copy.img"
	assert_success
	assert_line --index 0 "Running: 64"
	assert_line --index -1 "Running: 201"
	on_tty "$REPLAY" --random 200 "$IMG"
	assert_success
	assert_line --index -1 "Running: [########################################] 200/200"
	# standard input a file already read up to its second line: 201 lines to run, not 202
	{ echo "# a line read before"; cat "$T/script"; } >"$T/script2"
	mkimg "$T/third.img"
	on_tty bash -c '{ read -r _; "$1" "$2" -; } <"$3"' _ "$REPLAY" "$T/third.img" "$T/script2"
	assert_success
	assert_line --index -1 "Running: [########################################] 201/201"
	# no terminal, no bar
	SUFS_PROGRESS_DELAY=0 run "$REPLAY" --random 200 "$IMG"
	assert_success
	assert_output ""
}

@test "on a terminal a script that fails ends the bar where it stood, then says why" {
	{
		for i in $(seq 99); do echo "mkdir /d$i"; done
		echo "bogus"
		for i in $(seq 50); do echo "mkdir /e$i"; done
	} >"$T/script"
	on_tty "$REPLAY" "$IMG" "$T/script"
	assert_failure 4
	assert_output - <<EOF2
Running: [#################                       ] 64/150
Running: [##########################              ] 99/150
sufs-replay: $T/script:100: unknown operation 'bogus'
EOF2
}

@test "--crash-after-write exits 32 and leaves an image sufs-debug opens, marked not clean" {
	printf '%s\n' "$every_op" >"$T/script"
	run --separate-stderr "$REPLAY" --crash-after-write 10 "$IMG" "$T/script"
	assert_failure 32
	[[ $stderr == "sufs-replay: crashed as asked, after 10 block writes and "* ]]
	dbg "ls /"
	assert_success
	run "$DUMP" -h "$IMG"
	assert_output --regexp 'Filesystem state: +not clean'
}

@test "an image a crash left not clean stays so through runs that change it, until a check" {
	printf '%s\n' "$every_op" >"$T/script"
	run "$REPLAY" --crash-after-write 10 "$IMG" "$T/script"
	assert_failure 32
	run "$REPLAY" "$IMG" - <<<$'mkdir /later\ncreate /later/f\nwrite /later/f 0 5000 1'
	assert_success
	run "$DUMP" -h "$IMG"
	assert_output --regexp 'Filesystem state: +not clean'
	# so preen checks it, not skips it
	run "$FSCK" -p "$IMG"
	[ "$status" -le 1 ]
	run "$DUMP" -h "$IMG"
	assert_output --regexp 'Filesystem state: +clean'
}

@test "--crash-after-write 0 leaves the image as it was" {
	local before
	before=$(sha "$IMG")
	printf '%s\n' "$every_op" >"$T/script"
	run "$REPLAY" --crash-after-write 0 "$IMG" "$T/script"
	assert_failure 32
	[ "$(sha "$IMG")" = "$before" ]
}

@test "a crash point past the end of the run is not reached" {
	require_cmd python3
	printf 'mkdir /a\n' >"$T/script"
	cp "$IMG" "$T/copy.img"
	run "$REPLAY" --json "$T/copy.img" "$T/script"
	assert_success
	local writes barriers
	json_vars
	writes=$j_block_writes
	barriers=$j_barriers
	run --separate-stderr "$REPLAY" --crash-after-write 100000 "$IMG" "$T/script"
	assert_success
	assert_equal "$stderr" "sufs-replay: warning: the run ended after $writes block writes and $barriers barriers, before the crash point"
	run "$DUMP" -h "$IMG"
	assert_output --regexp 'Filesystem state: +clean'
	# a crash point just at the end is not reached either
	mkimg "$IMG" 16M
	run "$REPLAY" --crash-after-write "$writes" "$IMG" "$T/script"
	assert_success
}

@test "--crash-after-epoch N stops at the first write after the Nth barrier" {
	require_cmd python3
	printf '%s\n' "$every_op" >"$T/script"
	cp "$IMG" "$T/start.img"
	run --separate-stderr "$REPLAY" --crash-after-epoch 3 --json --iolog "$T/log" "$IMG" "$T/script"
	assert_failure 32
	json_vars
	[ "$j_crashed" = true ]
	[ "$j_crash_phase" = script ]
	[ "$j_barriers" = 3 ]
	# the image is exactly the first three epochs of a full run
	cp "$T/start.img" "$T/full.img"
	"$REPLAY" --iolog "$T/full.log" "$T/full.img" "$T/script"
	read -r w blocks b < <(iolog "$T/log")
	[ "$b" = 3 ]
	cp "$T/start.img" "$T/rebuilt.img"
	apply_log "$T/full.log" "$T/rebuilt.img" "$blocks"
	# the superblock's mount time comes from the real clock: compare the rest
	cmp <(tail -c +4097 "$IMG") <(tail -c +4097 "$T/rebuilt.img")
}

@test "every crash point of a softdep run keeps what was fsynced before it" {
	require_cmd python3
	local total n phase line rc
	printf '%s\n' 'mkdir /d' 'create /d/keep' 'write /d/keep 0 30K 9' 'fsync /d/keep' \
		'create /d/other' 'write /d/other 0 64K 1' 'mkdir /e' 'rename /d/other /e/o' \
		'create /e/later' 'write /e/later 0 8K 2' 'unlink /e/o' 'sync' >"$T/script"
	pattern 9 0 30720 >"$T/want"
	cp "$IMG" "$T/start.img"
	run "$REPLAY" --stats "$IMG" "$T/script"
	assert_success
	total=$(awk '/^Block writes:/ { print $3 }' <<<"$output")
	[ "$total" -gt 10 ]
	for n in $(seq 0 "$total"); do
		cp "$T/start.img" "$IMG"
		run --separate-stderr "$REPLAY" --stats --crash-after-write "$n" "$IMG" "$T/script"
		rc=$status
		[ "$rc" -eq 32 ] || [ "$rc" -eq 0 ]
		read -r phase line < <(crash_point)
		"$DEBUG" -R "ls /" "$IMG" >/dev/null || fail "crash after $n writes: unreadable"
		# line 4 fsynced /d/keep: from line 5 on, it is there, byte for byte
		if [ "$phase" = none ] || [ "$phase" = close ] ||
		   { [ "$phase" = script ] && [ "$line" -gt 4 ]; }; then
			"$DEBUG" -R "cat /d/keep" "$IMG" | cmp - "$T/want" ||
				fail "crash after $n writes ($phase $line): /d/keep is not as fsynced"
		fi
	done
}

@test "no crash point leaves a name whose inode number is the bytes of a removed name" {
	# New entries are carved out of the space a removed long name left; until
	# each one's inode is on disk, its inode number must read as 0 there, not
	# as whatever bytes the removed name had in that place.
	local long total n
	long=$(printf 'L%.0s' {1..200})
	mkimg "$IMG" 4M
	printf '%s\n' 'mkdir /d' 'create /d/a' "create /d/$long" 'create /d/b' 'sync' \
		"unlink /d/$long" 'sync' 'create /d/c1' 'create /d/c2' 'create /d/c3' \
		'create /d/c4' 'sync' >"$T/script"
	cp "$IMG" "$T/start.img"
	run "$REPLAY" --stats "$IMG" "$T/script"
	assert_success
	total=$(awk '/^Block writes:/ { print $3 }' <<<"$output")
	for n in $(seq 1 "$total"); do
		cp "$T/start.img" "$IMG"
		run "$REPLAY" --crash-after-write "$n" "$IMG" "$T/script"
		run "$DEBUG" -R "ls /" "$IMG"
		assert_success
		grep -qx d <<<"$output" || continue
		run "$DEBUG" -R "ls -l /d" "$IMG"
		[ "$status" -eq 0 ] || fail "crash after $n block writes: $output"
	done
}

# ---------------------------------------------------------------------------
# The I/O log

@test "--iolog records as many blocks, writes and barriers as --stats counts" {
	require_cmd python3
	printf '%s\n' "$every_op" >"$T/script"
	run "$REPLAY" --json --iolog "$T/log" "$IMG" "$T/script"
	assert_success
	read -r w blocks b < <(iolog "$T/log")
	json_vars
	[ "$blocks" = "$j_block_writes" ]
	[ "$w" = "$j_write_calls" ]
	[ "$b" = "$j_barriers" ]
	[ "$w" -gt 0 ]
}

@test "--iolog never overwrites the image or the script (exit 1, nothing written)" {
	echo "mkdir /a" >"$T/script"
	ln "$T/script" "$T/same"
	before=$(sha "$IMG")
	run --separate-stderr "$REPLAY" --iolog "$IMG" "$IMG" "$T/script"
	assert_failure 1
	assert_equal "$stderr" "sufs-replay: the I/O log $IMG is the image: it would be overwritten"
	[ "$(sha "$IMG")" = "$before" ]
	run --separate-stderr "$REPLAY" --iolog "$T/same" "$IMG" "$T/script"
	assert_failure 1
	assert_equal "$stderr" "sufs-replay: the I/O log $T/same is the script: it would be overwritten"
	[ "$(cat "$T/script")" = "mkdir /a" ]
	[ "$(sha "$IMG")" = "$before" ]
}

@test "one program writes an image at a time: the others are refused, readers are not; a fifo is refused at once" {
	mkfifo "$T/hold"
	# a writer that keeps the image open until its input ends; it has the
	# image open once it answers its first command (nothing else opens the
	# image meanwhile, which could make it refuse)
	"$DEBUG" -w "$IMG" <"$T/hold" >"$T/held" 2>&1 &
	writer=$!
	exec 5>"$T/hold"
	echo pwd >&5
	for _ in $(seq 600); do
		grep -qx / "$T/held" || ! kill -0 "$writer" 2>/dev/null && break
		sleep 0.05
	done
	grep -qx / "$T/held" || fail "the writer did not start: $(cat "$T/held")"
	before=$(sha "$IMG")
	run --separate-stderr "$REPLAY" "$IMG" - <<<"mkdir /a"
	assert_failure 2
	assert_equal "$stderr" "sufs-replay: cannot open $IMG: another program has it open for writing"
	run --separate-stderr "$SNAP" create "$IMG" s
	assert_failure 2
	run --separate-stderr "$FSCK" -fy "$IMG"
	assert_failure 8
	run --separate-stderr "$MKFS" -q -f "$IMG"
	assert_failure 2
	[ "$(sha "$IMG")" = "$before" ]
	run "$FSCK" -fn "$IMG"
	assert_success
	run "$DUMP" -h "$IMG"
	assert_success
	exec 5>&-
	wait
	run "$REPLAY" "$IMG" - <<<"mkdir /a"
	assert_success
	# a fifo as the image: refused by name, never waited on
	mkfifo "$T/fifo"
	run --separate-stderr timeout 10 "$REPLAY" "$T/fifo" - <<<"mkdir /a"
	assert_failure 2
	assert_equal "$stderr" "sufs-replay: cannot open $T/fifo: neither a regular file nor a block device"
	run --separate-stderr timeout 10 "$FSCK" -n "$T/fifo"
	assert_failure 8
}

@test "the I/O log rebuilds the image from a copy taken before the run" {
	require_cmd python3
	cp "$IMG" "$T/start.img"
	run "$REPLAY" --random 300 --seed 3 --iolog "$T/log" "$IMG"
	assert_success
	apply_log "$T/log" "$T/start.img"
	cmp "$T/start.img" "$IMG"
}

@test "a crashed run's log holds exactly what reached the image, a cut write included" {
	require_cmd python3
	local n
	printf '%s\n' "$every_op" >"$T/script"
	cp "$IMG" "$T/start.img"
	for n in 1 2 3 7 11 19 31; do
		cp "$T/start.img" "$T/crash-$n.img"
		run "$REPLAY" --crash-after-write "$n" --iolog "$T/log-$n" "$T/crash-$n.img" "$T/script"
		assert_failure 32
	done
	# each log rebuilds its crashed image from the start, and holds n blocks
	python3 - "$T" 1 2 3 7 11 19 31 <<'EOF'
import struct, sys
t = sys.argv[1]
start = open(t + '/start.img', 'rb').read()
for n in map(int, sys.argv[2:]):
    d = open('%s/log-%d' % (t, n), 'rb').read()
    bs = struct.unpack_from('<I', d, 12)[0]
    img, p, blocks = bytearray(start), 24, 0
    while p < len(d):
        kind = d[p:p + 1]
        p += 1
        if kind == b'B':
            continue
        blk, count = struct.unpack_from('<QI', d, p)
        p += 12
        img[blk * bs:(blk + count) * bs] = d[p:p + count * bs]
        p += count * bs
        blocks += count
    assert blocks == n, 'log-%d holds %d blocks' % (n, blocks)
    got = open('%s/crash-%d.img' % (t, n), 'rb').read()
    assert bytes(img[:len(got)]) == got, 'log-%d does not rebuild crash-%d.img' % (n, n)
EOF
}

@test "an I/O log that cannot be created exits 8" {
	printf 'sync\n' >"$T/script"
	run "$REPLAY" --iolog "$T/no/such/dir/log" "$IMG" "$T/script"
	assert_failure 8
	assert_output --partial "cannot create the I/O log"
}

@test "the examples of sufs-replay(8) run in order from an empty directory and print what the page shows" {
	require_root  # the page shows the files as user 0's
	run_examples sufs-replay.8
	# what the page cannot promise: how long things take
	local vary='s/^(Wall time: +)[0-9.]+ s$/\1(time)/
		s/^[0-9.]+ s to run, [0-9.]+ s to check: [0-9]+ states\/s$/(times)/'
	diff -u <(sed -E "$vary" "$T/expected") <(sed -E "$vary" "$T/actual")
}

@test "SIGINT, SIGTERM and SIGHUP stop a run between two lines and write back the lines run (exit 4)" {
	for sig in INT TERM HUP; do
		mkimg "$IMG"
		mkfifo "$T/lines"
		"$REPLAY" "$IMG" "$T/lines" 2>"$T/err" &
		pid=$!
		exec 6>"$T/lines"
		echo "mkdir /a" >&6
		sleep 0.5
		kill -"$sig" "$pid"
		# the run waits for its next line, and stops before it
		echo "mkdir /b" >&6
		exec 6>&-
		st=0
		wait "$pid" || st=$?
		[ "$st" -eq 4 ] || fail "exit status $st, not 4"
		run cat "$T/err"
		assert_output --regexp "^sufs-replay: [A-Za-z]+: stopped before line (1|2); the lines run are written back\$"
		run "$DEBUG" -R "ls /" "$IMG"
		refute_line b
		if [[ $(cat "$T/err") == *"line 2;"* ]]; then
			assert_line a
		fi
		run "$FSCK" -n "$IMG"   # closed clean: not even -f is needed
		assert_success
		assert_output --partial "clean"
		rm -f "$T/lines"
	done
}

@test "space freed is space usable: a file written in the room of one just removed, in each mode" {
	# 4 MiB: 3 MiB written and removed, then 2 MiB: the frees wait for the
	# removal to reach the disk, and the allocation writes it back first
	for mode in softdep sync async; do
		mkimg "$T/small.img" 4M
		run "$REPLAY" --mode "$mode" "$T/small.img" - <<<$'create /a\nwrite /a 0 3M 1\nsync\nunlink /a\ncreate /c\nwrite /c 0 2M 2\nfsync /c'
		assert_success
		run "$FSCK" -fn "$T/small.img"
		assert_success
		run "$DEBUG" -R "stat /c" "$T/small.img"
		assert_line --regexp "Size: 2097152"
		# and a full one is still full: ENOSPC when the space is in use
		run "$REPLAY" --mode "$mode" "$T/small.img" - <<<$'create /d\nwrite /d 0 3M 3'
		assert_failure 4
		[[ $output == *"No space left on device (ENOSPC)"* ]]
	done
}

@test "inodes freed are inodes usable: files made in the room of those just removed, in each mode" {
	for mode in softdep sync async; do
		mkimg "$T/few.img" 4M -N 64
		n=$("$DUMP" -h "$T/few.img" | awk '/^Free inodes:/ { print $3 }')
		[ "$n" -gt 50 ]
		{
			for i in $(seq "$n"); do echo "create /f$i"; done
			echo "!ENOSPC create /full"
			echo sync
			for i in $(seq "$n"); do echo "unlink /f$i"; done
			for i in $(seq "$n"); do echo "create /g$i"; done
			echo "!ENOSPC create /full"
		} >"$T/inodes.txt"
		run "$REPLAY" --mode "$mode" "$T/few.img" "$T/inodes.txt"
		assert_success
		run "$FSCK" -fn "$T/few.img"
		assert_success
	done
}

@test "--direct writes the image with O_DIRECT, past the page cache: the same image as without, checked clean" {
	local text='create /a
write /a 0 3M 1
mkdir /d
create /d/b
write /d/b 100 5000 2
sync
unlink /a'
	cp "$IMG" "$T/plain.img"
	play "$text" --direct
	assert_success
	printf '%s\n' "$text" >"$T/script"
	"$REPLAY" "$T/plain.img" "$T/script"
	cmp "$IMG" "$T/plain.img"
	run "$FSCK" -fn "$IMG"
	assert_success
	if command -v strace >/dev/null; then
		# the blocks went through a descriptor opened with O_DIRECT
		mkimg "$IMG" 16M
		# (LeakSanitizer cannot run under ptrace: off for this run)
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
			strace -f -o "$T/trace" -e trace=openat,pwrite64 "$REPLAY" --direct "$IMG" "$T/script"
		fd=$(sed -nE 's/.*openat\(.*fs\.img", [A-Z_|]*O_DIRECT[A-Z_|]*\) = ([0-9]+)$/\1/p' "$T/trace")
		[ -n "$fd" ] || fail "no open with O_DIRECT: $(grep openat "$T/trace")"
		grep -qE "pwrite64\($fd, " "$T/trace" || fail "no write through it"
	fi
	play "$text" --direct --crash-check
	assert_failure 1
	[[ $stderr == *"--direct goes with a workload run on the image"* ]] || fail "$stderr"
}
