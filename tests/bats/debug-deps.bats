#!/usr/bin/env bats
# sufs-debug's dependency views (deps, why, flush, crash, stats), its raw
# inspection commands (block_dump, imap, testb, testi, ffb, ffi), and the
# prompt itself driven through a terminal (tmux).
#
# With -w the changes of the modifying commands stay in memory until a
# flush, sync or quit, so one -f script can make them and look at them.

bats_require_minimum_version 1.5.0
load helper

setup() {
	IMG=$T/img
	mkimg "$IMG" 16M
}

# dbg LINES...: run the lines as one -f script on a writable image
dbg() {
	printf '%s\n' "$@" >"$T/cmds"
	run --separate-stderr "$DEBUG" -w -f "$T/cmds" "$IMG"
}

# The rows of the deps table (no header), as "ID KIND BLOCK TYPE..." with
# the two-word type "inode table" joined into one word.
rows() {
	sed -n '/^ *ID  KIND/,/^[^ ]/p' <<<"$1" | grep -E '^ +[0-9]+ ' |
		sed 's/inode table/inode_table/'
}

# id_of OUTPUT KIND STATE: the ids of the rows of that kind and state
ids_of() {
	rows "$1" | awk -v k="$2" -v s="$3" '$2 == k && $7 == s { print $1 }'
}

# ---- deps --------------------------------------------------------------------

@test "after mkdir, deps shows the new name (diradd) waiting for the new inode (inodedep)" {
	dbg "mkdir /a" "deps"
	assert_success
	assert_line --regexp '^[0-9]+ updates pending on [0-9]+ blocks, [0-9]+ of them blocked'
	# the entry's inode number is blocked and waits for an inodedep
	local diradd waits inodedeps w found=0
	diradd=$(ids_of "$output" diradd blocked)
	[ "$(wc -w <<<"$diradd")" -eq 1 ]
	waits=$(rows "$output" | awk -v id="$diradd" '$1 == id { print $9 }' | tr , ' ')
	inodedeps=$(rows "$output" | awk '$2 == "inodedep" && $4 == "inode_table" { print $1 }')
	for w in $waits; do
		grep -qx "$w" <<<"$inodedeps" && found=1
	done
	[ "$found" -eq 1 ]
	# and the new directory's first block is its own update, ready now
	[ -n "$(ids_of "$output" mkdir ready)" ]
	[ -n "$(ids_of "$output" bmsafemap ready)" ]
}

@test "deps with nothing pending says so, and on a read-only image too" {
	run --separate-stderr "$DEBUG" -R deps "$IMG"
	assert_success
	assert_output --partial "no updates pending"
	dbg "mkdir /a" "sync" "deps"
	assert_success
	assert_output --partial "no updates pending"
}

@test "deps BLOCK shows that block's updates and what they wait for; other blocks' only when linked" {
	dbg "mkdir /a" "create /b" "deps"
	local all dirblk
	all=$output
	# the root directory block: the one with the diradd rows
	dirblk=$(rows "$all" | awk '$2 == "diradd" { print $3; exit }')
	mkimg "$IMG" 16M
	dbg "mkdir /a" "create /b" "deps $dirblk"
	assert_success
	assert_line --regexp "^[0-9]+ updates? pending on block $dirblk;"
	# every row of the block is shown ...
	[ "$(rows "$all" | awk -v b="$dirblk" '$3 == b' | wc -l)" -eq \
	  "$(rows "$output" | awk -v b="$dirblk" '$3 == b' | wc -l)" ]
	# ... and every row shown is on it, waits for one on it, or is waited
	# for by one that is shown
	local id blk waits waited own w ok
	waited=$(rows "$output" | awk '{ print $9 }' | tr , '\n')
	own=$(rows "$output" | awk -v b="$dirblk" '$3 == b { print $1 }')
	while read -r id blk waits; do
		ok=0
		[ "$blk" = "$dirblk" ] && ok=1
		grep -qx "$id" <<<"$waited" && ok=1
		for w in ${waits//,/ }; do
			grep -qx "$w" <<<"$own" && ok=1
		done
		[ "$ok" -eq 1 ]
	done < <(rows "$output" | awk '{ print $1, $3, $9 }')
}

@test "deps PATH shows a file's inode and blocks, and the name that waits for it" {
	dbg "mkdir /a" "mkdir /b" "deps /a"
	assert_success
	assert_line --regexp '^[0-9]+ updates pending on /a \(inode [0-9]+, its blocks\)'
	# /a's first block (mkdir), its inode (inodedep), the name /a (diradd)
	[ "$(rows "$output" | awk '$2 == "mkdir"' | wc -l)" -eq 1 ]
	[ -n "$(ids_of "$output" diradd blocked)" ]
	# /b's directory block is not /a's business
	mkimg "$IMG" 16M
	dbg "mkdir /a" "mkdir /b" "deps"
	[ "$(rows "$output" | awk '$2 == "mkdir"' | wc -l)" -eq 2 ]
}

@test "deps fails on a block past the end or a missing path" {
	dbg "deps 99999999"
	assert_failure 4
	assert_equal "$stderr" "sufs-debug: deps 99999999: not a block number (the image has 0 to 4095)"
	dbg "deps /nope"
	assert_failure 4
	assert_equal "$stderr" "sufs-debug: deps /nope: No such file or directory"
	dbg "deps --bogus"
	assert_failure 4
	assert_output ""
}

@test "the epoch deps predicts for each update is the epoch flush writes it in" {
	dbg "mkdir /a" "create /a/f" "write /a/f 0 10000" "mkdir /a/d" "rename /a/f /a/d/g" \
		"deps" "flush 10"
	assert_success
	local id epoch seen=0
	while read -r id epoch; do
		# the update's "written" line lies in the section of that epoch
		awk -v id="#$id" '
			/^epoch [0-9]+:/ { cur = $0 }
			$1 == id && $NF == "written" { print cur }' <<<"$output" |
			grep -qx "epoch $epoch:"
		seen=$((seen + 1))
	done < <(rows "$output" | awk '{ print $1, $8 }')
	[ "$seen" -gt 10 ]
	assert_line "0 updates pending on 0 dirty blocks"
}

@test "deps --chains draws what each update waits for, down to what is ready" {
	dbg "mkdir /a" "deps --chains"
	assert_success
	assert_line --regexp '^#[0-9]+ diradd, block [0-9]+ \(directory\) bytes [0-9]+\+4: blocked, epoch 3$'
	assert_line --regexp '^(\|-- |`-- )#[0-9]+ inodedep, block [0-9]+ \(inode table\) bytes [0-9]+\+256: blocked, epoch 2$'
	assert_line --regexp '^(\||    ) *(\|-- |`-- )#[0-9]+ bmsafemap, .*: ready, epoch 1$'
}

@test "deps --chains draws an update two names wait for once; --dot PATH draws only what PATH's updates touch" {
	dbg "mkdir /a" "create /a/f" "create /a/g" "link /a/f /a/h" "deps" "deps --chains" \
		"deps --dot $T/f.dot /a/f"
	assert_success
	local ino
	ino=$(rows "$output" | awk '$2 == "inodedep" && $4 == "inode_table" && $5 == 768 { print $1 }')
	[ -n "$ino" ]
	# drawn once (under the link count's delta, which the second name waits
	# for), and once as a reference
	[ "$(grep -cE "^[ |]*\`-- #$ino inodedep, .*: blocked, epoch 2\$" <<<"$output")" -eq 1 ]
	[ "$(grep -cE "^\`-- #$ino inodedep, .*: blocked, epoch 2 \(waits as shown above\)\$" <<<"$output")" -eq 1 ]
	# /a/f: its inode, the bitmap bit it waits for, its link count's delta,
	# its two names, and /a's inode, which maps the block they are in (with
	# its bits and the block); not /a/g, not /a's name
	[ "$(grep -cE '^\s+u[0-9]+ \[label=' "$T/f.dot")" -eq 8 ]
	[ "$(grep -c 'subgraph cluster_' "$T/f.dot")" -eq 4 ]
	grep -q "u$ino \[label=\"#$ino inodedep" "$T/f.dot"
	! grep -q 'bytes 1024+256' "$T/f.dot"
	! grep -q "cluster_$("$DEBUG" -R "blocks /" "$IMG") " "$T/f.dot"
	[ "$(grep -cE "^\s+u$ino -> u[0-9]+;" "$T/f.dot")" -eq 2 ]
}

@test "deps --dot writes a graph: a cluster per block, an edge per wait, and dot reads it" {
	dbg "mkdir /a" "create /a/f" "deps" "deps --dot $T/g.dot"
	assert_success
	local nupd nblk nedges
	nupd=$(rows "$output" | wc -l)
	nblk=$(rows "$output" | awk '{ print $3 }' | sort -u | wc -l)
	nedges=$(rows "$output" | awk '$9 != "-" { print $9 }' | tr , '\n' | wc -l)
	[ "$(grep -c 'subgraph cluster_' "$T/g.dot")" -eq "$nblk" ]
	[ "$(grep -cE '^\s+u[0-9]+ \[label=' "$T/g.dot")" -eq "$nupd" ]
	[ "$(grep -cE '^\s+u[0-9]+ -> u[0-9]+;' "$T/g.dot")" -eq "$nedges" ]
	require_cmd dot
	dot -Tsvg "$T/g.dot" -o "$T/g.svg"
	grep -q '<svg' "$T/g.svg"
}

@test "deps --svg renders through dot" {
	require_cmd dot
	dbg "mkdir /a" "deps --svg $T/g.svg"
	assert_success
	grep -q '<svg' "$T/g.svg"
	grep -q 'diradd' "$T/g.svg"
}

@test "deps --svg without Graphviz says so and prints the chains instead" {
	printf '%s\n' "mkdir /a" "deps --svg $T/g.svg" >"$T/cmds"
	# a PATH with the basic tools (the libtool wrapper needs some) and no dot
	local tool
	mkdir "$T/bin"
	for tool in sh bash ls sed cat rm mkdir dirname basename expr tr uname env; do
		if command -v "$tool" >/dev/null; then ln -s "$(command -v "$tool")" "$T/bin/"; fi
	done
	run --separate-stderr env PATH="$T/bin" "$DEBUG" -w -f "$T/cmds" "$IMG"
	assert_failure 4
	assert_equal "$stderr" "sufs-debug: deps $T/g.svg: dot (Graphviz) is not installed: no SVG written; the chains as text instead"
	assert_line --regexp '^#[0-9]+ diradd, .*: blocked, epoch 3$'
	[ ! -e "$T/g.svg" ]
}

@test "deps --svg fails when dot fails, and --dot when its file cannot be made" {
	mkdir "$T/bin"
	printf '#!/bin/sh\ncat >/dev/null\necho "dot: bad" >&2\nexit 3\n' >"$T/bin/dot"
	chmod +x "$T/bin/dot"
	printf '%s\n' "mkdir /a" "deps --svg $T/g.svg" >"$T/cmds"
	run --separate-stderr env PATH="$T/bin:$PATH" "$DEBUG" -w -f "$T/cmds" "$IMG"
	assert_failure 4
	assert_equal "$stderr" "$(printf '%s\n' "dot: bad" "sufs-debug: deps $T/g.svg: dot failed (exit status 3)")"
	dbg "mkdir /b" "deps --dot $T/no/such/g.dot"
	assert_failure 4
	assert_equal "$stderr" "sufs-debug: deps $T/no/such/g.dot: No such file or directory"
}

@test "a block dirty with times and counts only: deps counts it, flush writes it with no ordered update" {
	"$REPLAY" "$IMG" - <<<"create /f"
	dbg "utimes /f 5 5" "deps" "flush" "deps"
	assert_success
	assert_equal "$output" "$(printf '%s\n' \
		"no updates pending: the disk holds what memory holds, but for times and counts" \
		"1 more dirty block with times and counts only" \
		"epoch 1:" \
		"  block 4 (inode table): no ordered update: times and counts only" \
		"  1 block written, 0 updates went out, 0 undone" \
		"0 updates pending on 0 dirty blocks" \
		"no updates pending: the disk holds what memory holds, but for times and counts")"
	run "$DEBUG" -R "stat /f" "$IMG"
	assert_line --regexp '^ mtime: 5\.000000000 '
}

# ---- why ---------------------------------------------------------------------

@test "why names the chain that keeps a directory block from going out as it is" {
	dbg "mkdir /a" "deps"
	local dirblk bmblk
	dirblk=$(rows "$output" | awk '$2 == "diradd" && $7 == "blocked" { print $3 }')
	bmblk=$(rows "$output" | awk '$2 == "bmsafemap" { print $3; exit }')
	mkimg "$IMG" 16M
	dbg "mkdir /a" "why $dirblk" "why $bmblk" "why 0"
	assert_success
	assert_line --regexp "^block $dirblk \(directory\): 2 updates pending, 1 of them undone in its next write$"
	assert_line --regexp '^#[0-9]+ diradd, .* blocked, epoch 3 waits for$'
	assert_line --regexp '^    (\|-- |`-- )#[0-9]+ inodedep, .*: blocked, epoch 2$'
	assert_line "its bytes in memory are all on disk after epoch 3 of a full flush"
	assert_line --regexp "^block $bmblk \(bitmap\): 1 update pending, 0 of them undone"
	assert_line "its next write carries every pending update: on disk after epoch 1"
	assert_line "block 0: no update pending: nothing keeps it from going out as it stands in memory"
}

@test "why needs a block number" {
	dbg "why /a"
	assert_failure 4
	assert_equal "$stderr" "sufs-debug: why: usage: why BLOCK"
}

# ---- flush -------------------------------------------------------------------

@test "flush 1 writes the bitmaps and the new block and undoes the inode and the name; the inode goes out next" {
	dbg "mkdir /a" "deps" "flush 1" "flush 1" "flush 1" "flush 1"
	assert_success
	local ino name
	ino=$(ids_of "$output" inodedep blocked)
	name=$(ids_of "$output" diradd blocked)
	# the sections of each epoch
	sec() { awk -v e="epoch $1:" '/^epoch [0-9]+:/ { on = ($0 == e) } on' <<<"$output"; }
	sec 1 | grep -qE "^    #$ino inodedep bytes [0-9]+\+256: undone, waits for"
	sec 1 | grep -qE "^    #$name diradd bytes [0-9]+\+4: undone, waits for"
	sec 1 | grep -qE '^  block [0-9]+ \(bitmap\): 1 went out, 0 undone$'
	sec 1 | grep -qE '^    #[0-9]+ mkdir bytes 0\+4096: written$'
	sec 2 | grep -qE "^    #$ino inodedep bytes [0-9]+\+256: written$"
	[ "$(sec 2 | grep -c "#$name ")" -eq 0 ]
	sec 3 | grep -qE "^    #$name diradd bytes [0-9]+\+4: written$"
	sec 4 | grep -qx "  nothing to write"
}

@test "flush needs -w and a positive number" {
	run --separate-stderr "$DEBUG" -R flush "$IMG"
	assert_failure 4
	assert_equal "$stderr" "sufs-debug: flush: the image is open read-only (use -w)"
	dbg "flush 0"
	assert_failure 4
	assert_equal "$stderr" "sufs-debug: flush 0: not a number of epochs"
}

# ---- crash -------------------------------------------------------------------

@test "crash after flush 1 loses the new name: ls shows no /a, and fsck finds only leaks" {
	dbg "mkdir /a" "flush 1" "ls /" "crash" "ls /"
	assert_success
	# before the crash, memory has /a; after it, the disk has only the slot
	[ "$(grep -cx a <<<"$output")" -eq 1 ]
	assert_line --regexp '^dropped [1-9][0-9]* pending updates and [1-9][0-9]* dirty blocks$'
	[ "$(sed -n '/^reopened/,$p' <<<"$output" | grep -cx a)" -eq 0 ]
	run "$FSCK" -fL "$IMG"
	assert_equal "$status" 1
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "crash after a full flush keeps everything" {
	dbg "mkdir /a" "create /a/f" "flush 4" "crash" "ls /a"
	assert_success
	assert_line "f"
	run "$FSCK" -fn "$IMG"
	assert_equal "$status" 4  # leaks only: the summaries were never written
	run "$FSCK" -fL "$IMG"
	assert_equal "$status" 1
}

@test "crash with nothing written leaves the image as it was" {
	dbg "mkdir /a" "create /b" "crash" "ls /" "deps"
	assert_success
	assert_output --partial "no updates pending"
	run "$FSCK" -fn "$IMG"
	assert_success
}

# ---- stats -------------------------------------------------------------------

@test "stats counts pending updates, epochs, undone updates and writes" {
	dbg "mkdir /a" "deps" "stats" "flush 3" "stats"
	assert_success
	local n
	n=$(sed -nE 's/^([0-9]+) updates pending on.*/\1/p' <<<"$output" | head -1)
	[ "$(grep -E '^Pending updates:' <<<"$output" | head -1 | awk '{ print $3 }')" -eq "$n" ]
	[ "$(grep -E '^Pending updates:' <<<"$output" | tail -1 | awk '{ print $3 }')" -eq 0 ]
	[ "$(grep -E '^Epochs:' <<<"$output" | tail -1 | awk '{ print $2 }')" -eq 3 ]
	[ "$(grep -E '^Updates undone in writes:' <<<"$output" | tail -1 | awk '{ print $5 }')" -ge 2 ]
	[ "$(grep -E '^Peak pending updates:' <<<"$output" | tail -1 | awk '{ print $4 }')" -eq "$n" ]
}

@test "stats counts a directory renamed again before its first rename reached the disk" {
	dbg "mkdir /a" "mkdir /b" "sync" "rename /a /b/a" "stats" "rename /b/a /c" "stats"
	assert_success
	local w1 w2
	w1=$(grep -E '^Block writes:' <<<"$output" | head -1 | awk '{ print $3 }')
	w2=$(grep -E '^Block writes:' <<<"$output" | tail -1 | awk '{ print $3 }')
	[ "$(grep -E '^Moves settled:' <<<"$output" | head -1 | awk '{ print $3 }')" -eq 0 ]
	[ "$(grep -E '^Moves settled:' <<<"$output" | tail -1 | awk '{ print $3 }')" -eq 1 ]
	# the first rename's removal and what it waits for went at once
	[ "$w2" -gt "$w1" ]
}

# ---- block_dump, imap, testb, testi, ffb, ffi ----------------------------------

@test "block_dump shows hex and ASCII; in memory the new bytes, on disk (-d) the old ones until flushed" {
	dbg "mkdir /abcdefgh" "block_dump -f / 0" "block_dump -d -f / 0"
	assert_success
	# the name, once in memory and not on disk
	[ "$(grep -c '|.*abcdefgh' <<<"$output")" -eq 1 ]
	assert_line --regexp '^0000  02 00 00 00 10 00 01 02  2e 00 00 00 '  # ".", inode 2
	dbg "sync" "block_dump -d -f / 0"
	assert_success
	[ "$(grep -c '|.*abcdefgh' <<<"$output")" -eq 1 ]
}

@test "block_dump collapses repeated lines and ends with the block size" {
	run --separate-stderr "$DEBUG" -R "block_dump 4000" "$IMG"
	assert_success
	assert_output "$(printf '0000  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|\n*\n1000')"
	run --separate-stderr "$DEBUG" -R "block_dump 4096" "$IMG"
	assert_failure 4
	assert_equal "$stderr" "sufs-debug: block_dump 4096: not a block number (the image has 0 to 4095)"
	run --separate-stderr "$DEBUG" -R "block_dump -f / 7" "$IMG"
	assert_failure 4
	assert_equal "$stderr" "sufs-debug: block_dump /: logical block 7 is a hole"
}

@test "imap names the inode table block and offset of an inode" {
	run --separate-stderr "$DEBUG" -f - "$IMG" <<<$'imap <2>\nimap <3>\ngroups'
	assert_success
	local itable
	itable=$(awk '$1 == "0" { print $6 }' <<<"$output")
	assert_line "Inode 2 is part of block group 0"
	assert_line "$(printf '\tlocated at block %s, offset 0x0100' "$itable")"
	assert_line "$(printf '\tlocated at block %s, offset 0x0200' "$itable")"
}

@test "testb, testi, ffb and ffi agree with the bitmaps as files come and go" {
	dbg "ffi" "ffb 2"
	assert_success
	local ino blk fino fblk
	ino=$(sed -n 's/^Free inodes found: //p' <<<"$output")
	blk=$(sed -n 's/^Free blocks found: \([0-9]*\) [0-9]*$/\1/p' <<<"$output")
	[ -n "$ino" ]
	[ -n "$blk" ]
	dbg "testi <$ino>" "testb $blk" "create /f" "write /f 0 100" "stat /f" "blocks /f"
	assert_success
	assert_line "Inode $ino is not in use"
	assert_line "Block $blk not in use"
	fino=$(sed -n 's/^Inode: \([0-9]*\) .*/\1/p' <<<"$output")
	fblk=${lines[-1]}
	dbg "testi /f" "testb $fblk" "ffi 3 $fino" "ffb 3 $fblk" "testb 0 3"
	assert_success
	assert_line "Inode $fino is marked in use"
	assert_line "Block $fblk marked in use"
	assert_line --regexp "^Free inodes found: [0-9]+ [0-9]+ [0-9]+$"
	assert_line --regexp "^Free blocks found: [0-9]+ [0-9]+ [0-9]+$"
	refute_line --regexp "^Free inodes found: .*\b$fino\b"
	refute_line --regexp "^Free blocks found: .*\b$fblk\b"
	assert_line "Block 0 marked in use"
	assert_line "Block 2 marked in use"
}

@test "ffb fails when it cannot find as many as asked; testb past the end fails" {
	dbg "ffb 5000"
	assert_failure 4
	assert_line --regexp '^Free blocks found: '
	assert_equal "$stderr" "$(printf 'sufs-debug: ffb: only %s free blocks found, not 5000' \
		"$(wc -w <<<"${lines[0]#Free blocks found: }")")"
	dbg "testb 4090 7"
	assert_failure 4
	assert_equal "$stderr" "sufs-debug: testb 7: not a count of blocks from 4090 (at most 6)"
}

@test "the inspecting commands name what is wrong with their arguments" {
	local cmd msg
	while IFS='|' read -r cmd msg; do
		run --separate-stderr "$DEBUG" -w -R "$cmd" "$IMG"
		[ "$status" -eq 4 ] && [ "$stderr" = "sufs-debug: $msg" ] ||
			fail "$cmd: $status: '$stderr'"
	done <<'EOF'
block_dump -x 5|block_dump: usage: block_dump [-d] BLOCK | [-d] -f PATH LBLK
block_dump 1 2|block_dump: usage: block_dump [-d] BLOCK | [-d] -f PATH LBLK
block_dump -f / x|block_dump x: not a logical block number
block_dump -f /nope 0|block_dump /nope: No such file or directory
imap|imap: usage: imap PATH
imap /nope|imap /nope: No such file or directory
testb|testb: usage: testb BLOCK [COUNT]
testi|testi: usage: testi PATH
testi /nope|testi /nope: No such file or directory
ffb 0|ffb 0: not a count
ffb 1 99999|ffb 99999: not a block number (the image has 0 to 4095)
ffi 1 0|ffi 0: not an inode number (the image has 1 to 1024)
ffi 1 2 3|ffi: usage: ffi [COUNT [GOAL]]
why 99999|why 99999: not a block number (the image has 0 to 4095)
flush 1 2|flush: usage: flush [N]
EOF
}

# ---- every new command through -R ----------------------------------------------

@test "every new command runs through -R with the exit status it earns" {
	local c
	for c in "deps" "deps --chains" "deps 2" "deps /" "why 2" "stats" "block_dump 1" \
		"imap /" "testb 1" "testi /" "ffb" "ffi" "crash" "help deps" "help why"; do
		run "$DEBUG" -R "$c" "$IMG"
		[ "$status" -eq 0 ] || { echo "$c: $status: $output"; false; }
	done
	run "$DEBUG" -w -R "flush 2" "$IMG"
	assert_success
	assert_line "  nothing to write"
	for c in "deps 1 2" "why" "flush x" "crash now" "stats 1" "imap" "testi /nope" "ffi x"; do
		run "$DEBUG" -w -R "$c" "$IMG"
		[ "$status" -eq 4 ] || { echo "$c: $status: $output"; false; }
	done
}

@test "help lists the new commands, and help COMMAND describes one" {
	run "$DEBUG" -R help "$IMG"
	assert_success
	local c
	for c in deps why flush crash stats block_dump imap testb testi ffb ffi; do
		assert_line --regexp "^  $c "
	done
	run "$DEBUG" -R "help flush" "$IMG"
	assert_output "$(printf 'flush [N]\n    write N epochs (default 1): per block, what went out, what was undone\n    needs the image opened with -w')"
}

# ---- the prompt, through a terminal ----------------------------------------------

# A session of sufs-debug in a detached tmux window 100x20; the screen is
# read with `screen`.
start_prompt() {
	require_cmd tmux
	export TMUX_TMPDIR=$T   # a tmux server of our own
	tmux -f /dev/null new-session -d -s sd -x 100 -y 20 \
		"env SUFS_DEBUG_HISTORY=$T/history PAGER='sed s/^/PAGED:/' HOME=$T \
		 $DEBUG $* $IMG; echo EXITED \$?; sleep 30"
	wait_for '^sufs-debug img:/> ?$'
}

screen() { tmux capture-pane -t sd -p -S -200; }

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

stop_prompt() {
	tmux kill-server 2>/dev/null || true
}

teardown() {
	if [ -n "${TMUX_TMPDIR:-}" ]; then
		stop_prompt
	fi
}

@test "at the prompt: a path completes with Tab, Up recalls a line, a failing command says why" {
	"$DEBUG" -w -f - "$IMG" <<<$'mkdir /docs\ncreate /docs/hello.txt'
	start_prompt -w
	tmux send-keys -t sd "ls /do" Tab
	wait_for '^sufs-debug img:/> ls /docs/$'
	tmux send-keys -t sd "he" Tab
	wait_for '^sufs-debug img:/> ls /docs/hello\.txt ?$'
	tmux send-keys -t sd Enter
	wait_for '^/docs/hello\.txt$'
	tmux send-keys -t sd "cat /nope" Enter
	wait_for '^sufs-debug: cat /nope: No such file or directory$'
	tmux send-keys -t sd "cd do" Tab Enter
	wait_for '^sufs-debug img:/docs> ?$'
	tmux send-keys -t sd "fl" Tab
	wait_for '^sufs-debug img:/docs> flush ?$'
	tmux send-keys -t sd C-u Up Up Up
	wait_for '^sufs-debug img:/docs> ls /docs/hello\.txt ?$'
	tmux send-keys -t sd Enter "quit" Enter
	wait_for '^EXITED 4$'   # cat /nope failed
	# the history went to the file, one line per command
	run cat "$T/history"
	assert_output "$(printf 'ls /docs/hello.txt \ncat /nope\ncd docs/\nls /docs/hello.txt \nquit')"
}

@test "at the prompt: completion types names that start with # or look like <INO> so that they mean themselves" {
	"$DEBUG" -w -f - "$IMG" <<<$'mkdir /d\ncreate "/d/#note"\ncreate "/d/<2>x"\ncreate "/<2>"'
	start_prompt -w
	tmux send-keys -t sd "cd /d" Enter "ls -l #" Tab
	wait_for '^sufs-debug img:/d> ls -l \\#note ?$'
	tmux send-keys -t sd Enter
	wait_for ' #note$'
	tmux send-keys -t sd "cd /" Enter "stat <" Tab
	wait_for '^sufs-debug img:/> stat \./<2> ?$'
	tmux send-keys -t sd C-u "ls <2>/d/<" Tab
	wait_for '^sufs-debug img:/> ls <2>/d/<2>x ?$'
	tmux send-keys -t sd Enter
	wait_for '^<2>/d/<2>x$'
	tmux send-keys -t sd "quit" Enter
	wait_for '^EXITED 0$'
}

@test "at the prompt: a directory typed with escapes or quotes completes inside it" {
	"$DEBUG" -w -f - "$IMG" <<<$'mkdir "/t\\tb"\ncreate "/t\\tb/inner"\nmkdir "/s p"\ncreate "/s p/file"\ncreate "/s p/it\'s"\ncreate "/s p/a\\tb"\ncreate "/s p/q\\"\\x01"'
	start_prompt
	tmux send-keys -t sd 'ls t\tb/in' Tab
	wait_for '^sufs-debug img:/> ls t\\tb/inner ?$'
	tmux send-keys -t sd C-u 'ls t\x09b/in' Tab
	wait_for '^sufs-debug img:/> ls t\\x09b/inner ?$'
	tmux send-keys -t sd C-u 'ls s\ p/f' Tab
	wait_for '^sufs-debug img:/> ls s\\ p/file ?$'
	tmux send-keys -t sd Enter
	wait_for '^s p/file$'
	tmux send-keys -t sd 'ls "s p/f' Tab
	wait_for '^sufs-debug img:/> ls "s p/file" ?$'
	tmux send-keys -t sd Enter
	wait_for '^s p/file$'
	# inside an open quote, names are typed as that quote reads them
	tmux send-keys -t sd "ls 's" Tab
	wait_for "^sufs-debug img:/> ls 's p/\$"
	tmux send-keys -t sd "i" Tab Enter
	wait_for "^sufs-debug img:/> ls 's p/it'\\\\''s' ?\$"
	wait_for "^s p/it's\$"
	tmux send-keys -t sd "ls 's p/a" Tab Enter
	wait_for "^sufs-debug img:/> ls 's p/a'\\\\t'b' ?\$"
	wait_for '^s p/a\\tb$'
	tmux send-keys -t sd 'ls "s p/q' Tab Enter
	wait_for '^sufs-debug img:/> ls "s p/q\\"\\x01" ?$'
	wait_for '^s p/q"\\x01$'
	# a quote closed before the slash holds its blank in the word
	tmux send-keys -t sd 'ls "s p"/f' Tab
	wait_for '^sufs-debug img:/> ls "s p"/file ?$'
	tmux send-keys -t sd C-u "ls 's p'/f" Tab
	wait_for "^sufs-debug img:/> ls 's p'/file ?\$"
	tmux send-keys -t sd Enter
	wait_for '^s p/file$'
	# the end of input (Ctrl-D) ends the session as quit does
	tmux send-keys -t sd C-d
	wait_for '^EXITED 0$'
}

@test "at the prompt: history from an earlier session comes back, and long output goes through the pager" {
	printf 'stat /\n' >"$T/history"
	start_prompt
	tmux send-keys -t sd Up
	wait_for '^sufs-debug img:/> stat /$'
	tmux send-keys -t sd C-u "help" Enter
	wait_for '^PAGED:  deps '
	# short output is not paged
	tmux send-keys -t sd "pwd" Enter
	wait_for '^/$'
	[ "$(screen | grep -c '^PAGED:/$')" -eq 0 ]
	tmux send-keys -t sd "quit" Enter
	wait_for '^EXITED 0$'
}
