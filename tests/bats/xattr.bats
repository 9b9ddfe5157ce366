#!/usr/bin/env bats
# Extended attributes and POSIX ACLs through the programs: the feature bit,
# every error of the calls (one test each), sufs-debug's ea_* commands and
# the updates they leave, sufs-dump's view, mkfs.sufs -d and rdump with
# setfattr/setfacl trees (a round trip), snapshots, metadata images, and
# fsck.sufs freeing a leaked attribute block.

bats_require_minimum_version 1.5.0
load helper

teardown() {
	if [ -n "${N:-}" ]; then
		chmod -R u+rwx "$N" 2>/dev/null || true
		rm -rf "$N"
	fi
}

# replay IMG LINE...: run script lines on IMG
replay() {
	local img=$1
	shift
	printf '%s\n' "$@" | "$REPLAY" "$img" -
}

# A file /f and a directory /d on a fresh 4 MiB image of 1 KiB blocks, $IMG.
fresh() {
	IMG=$T/img
	mkimg "$IMG" 4M -b 1024 "$@"
	replay "$IMG" "create /f" "mkdir /d"
}

@test "mkfs.sufs sets the xattr feature; with -O ^xattr the attribute calls are refused and a list is empty" {
	mkimg "$T/img" 4M -b 1024
	run "$DUMP" -h "$T/img"
	assert_line --regexp '^Read-only features: +0x1$'
	assert_line --regexp '^Features: +xattr$'
	mkimg "$T/plain" 4M -b 1024 -O ^xattr
	run "$DUMP" -h "$T/plain"
	assert_line --regexp '^Read-only features: +0x0$'
	replay "$T/plain" "create /f" "!EOPNOTSUPP setxattr /f user.a 1" "!EOPNOTSUPP rmxattr /f user.a"
	run "$DEBUG" -R "ea_list /f" "$T/plain"
	assert_success
	assert_output ""
	run "$MKFS" -q -O bogus "$T/other" 4M
	assert_failure 1
	assert_output --partial "unknown feature 'bogus'"
}

@test "ENODATA: an attribute that is not there, to read, remove or replace" {
	fresh
	replay "$IMG" "!ENODATA rmxattr /f user.a" "!ENODATA setxattr /f user.a 1 replace"
	run "$DEBUG" -R "ea_get /f user.a" "$IMG"
	assert_failure
	assert_output --partial "No data available"
}

@test "ERANGE: a name empty or over 255 bytes, and a buffer too small for the value" {
	fresh
	replay "$IMG" "!ERANGE setxattr /f user.$(long 251) v" "setxattr /f user.$(long 250) v" \
		"!ERANGE setxattr /f \"\" v" "setxattr /f user.a value"
	run "$DEBUG" -R "ea_get -s 2 /f user.a" "$IMG"
	assert_failure
	assert_output --partial "Numerical result out of range"
	run "$DEBUG" -R "ea_get -s 0 /f user.a" "$IMG"
	assert_success
	assert_output "5"
}

@test "E2BIG: a value over 64 KiB" {
	fresh
	head -c 65537 /dev/zero >"$T/big"
	run "$DEBUG" -w -R "ea_set -f $T/big /f user.big" "$IMG"
	assert_failure
	assert_output --partial "Argument list too long"
	head -c 65536 /dev/zero >"$T/big"
	run "$DEBUG" -w -R "ea_set -f $T/big /f user.big" "$IMG"
	assert_output --partial "No space left on device" # not E2BIG: it fits no block
}

@test "EEXIST and ENODATA: create over an attribute, replace of none" {
	fresh
	replay "$IMG" "setxattr /f user.a 1 create" "!EEXIST setxattr /f user.a 2 create" \
		"setxattr /f user.a 3 replace" "!ENODATA setxattr /f user.b 3 replace"
	run "$DEBUG" -w -R "ea_set -c /f user.a 4" "$IMG"
	assert_failure
	assert_output --partial "File exists"
	run "$DEBUG" -R "ea_get /f user.a" "$IMG"
	assert_output '"3"'
}

@test "ENOSPC: attributes that would not fit in a block, and no block free for them" {
	fresh
	replay "$IMG" "setxattr /f user.a $(long 900)" "!ENOSPC setxattr /f user.b $(long 200)" \
		"!ENOSPC setxattr /d user.a $(long 1020)"
	# a file system with no block left: the attributes that need one fail
	mkimg "$T/full" 256K -b 1024
	replay "$T/full" "create /f" "create /g" "setxattr /g user.x 1" "!ENOSPC write /f 0 1M 1" \
		"!ENOSPC setxattr /g user.y $(long 100)"
	run "$DEBUG" -R "ea_list /g" "$T/full"
	assert_output 'user.x (1) = "1"'
}

@test "EOPNOTSUPP: a namespace sufs does not keep; EINVAL: a prefix alone or a malformed ACL" {
	fresh
	replay "$IMG" "!EOPNOTSUPP setxattr /f other.a 1" "!EOPNOTSUPP setxattr /f system.other 1" \
		"!EOPNOTSUPP setxattr /f user 1" "!EINVAL setxattr /f user. 1" \
		"!EINVAL setxattr /f system.posix_acl_access 0x0200000001000900ffffffff" \
		"!EACCES setxattr /f system.posix_acl_default 0x0200000001000600ffffffff04000400ffffffff20000400ffffffff"
}

@test "EPERM: trusted. without privilege, and user. on what is neither a file nor a directory" {
	fresh
	replay "$IMG" "mknod /p p" "!EPERM setxattr /p user.a 1" "setxattr /p security.a 1" \
		"setxattr /f trusted.t root-only"
	require_root
	require_cmd setpriv
	N=$(mktemp -d /tmp/xattr-bats.XXXXXX)
	chmod 755 "$N"
	cp "$IMG" "$N/img"
	chmod 666 "$N/img"
	printf '%s\n' "!EPERM setxattr /f trusted.t v" "!EPERM rmxattr /f trusted.t" \
		"setxattr /f user.u by-nobody" >"$N/script"
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$REPLAY" "$N/img" "$N/script"
	assert_success
	run "$DEBUG" -R "ea_list /f" "$N/img"
	assert_line 'trusted.t (9) = "root-only"'
	assert_line 'user.u (9) = "by-nobody"'
}

@test "sufs-debug: ea_set, ea_get, ea_list and ea_rm; writes need -w and leave extattr updates pending" {
	fresh
	run "$DEBUG" -R "ea_set /f user.a 1" "$IMG"
	assert_failure
	run "$DEBUG" -w -f - "$IMG" <<EOF
ea_set /f user.a one
ea_set /f user.big $(long 300)
deps /f
ea_rm /f user.big
EOF
	assert_success
	assert_output --partial "extattr"
	run "$DEBUG" -R "ea_list /f" "$IMG"
	assert_output 'user.a (3) = "one"'
	run "$DEBUG" -R "ea_list -x /f" "$IMG"
	assert_output 'user.a (3) = 0x6f6e65'
	run "$DEBUG" -R "ea_get -f $T/out /f user.a" "$IMG"
	assert_success
	[ "$(cat "$T/out")" = one ]
	run "$DEBUG" -R "stat /f" "$IMG"
	assert_line "File ACL: 0"
	assert_line "Extended attributes:"
	assert_line '  user.a (3) = "one"'
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "sufs-dump -i shows where the attributes are and each one, in text and JSON, and checks the block" {
	fresh
	replay "$IMG" "setxattr /f user.a 1" "setxattr /d user.big $(long 100)" "setxattr /d user.s s"
	run "$DUMP" -i /f "$IMG"
	assert_line "Attributes (in the inode):"
	assert_line '  user.a (1) = "1"'
	run "$DUMP" -i /d "$IMG"
	assert_line --regexp '^Attributes \(in block [0-9]+\):$'
	assert_line '  user.s (1) = "s"'
	run "$DUMP" --json -i /d "$IMG"
	assert_success
	blk=$(printf '%s' "$output" | python3 -c 'import json,sys; print(json.load(sys.stdin)["inode"]["xattr_block"])')
	printf '%s' "$output" | python3 -c 'import json,sys; x = json.load(sys.stdin)["inode"]["xattrs"]; assert [(a["name"], a["size"]) for a in x] == [("user.big", 100), ("user.s", 1)], x; assert x[1]["value_hex"] == "73"'
	run "$DUMP" "$IMG"
	assert_line --partial "attribute blocks 1"
	# a changed byte of a value: the checksum no longer matches
	"$DEBUG" -w -R "zap_block $blk 40 1 0x41" "$IMG"
	run "$DUMP" -i /d "$IMG"
	assert_failure 4
	assert_output --partial "attribute block $blk: checksum does not match"
}

@test "a round trip: a tree with user. attributes and ACLs, mkfs.sufs -d, then sufs-dump and rdump show the same" {
	acl_tree
	getfattr -R -d -m - --absolute-names "$SRC" 2>/dev/null | sed "s|$SRC|TREE|" >"$T/want"
	getfacl -R --absolute-names "$SRC" 2>/dev/null | sed "s|$SRC|TREE|" >"$T/want-acl"
	"$MKFS" -q -b 1024 -d "$SRC" "$T/img" 8M
	run "$DEBUG" -R "ea_list /dir/file" "$T/img"
	assert_line 'user.colour (4) = "blue"'
	assert_line 'user.empty (0) = ""'
	assert_line 'user.bin (4) = "\x00\xff\x01\x7f"'
	assert_line --partial 'system.posix_acl_access (52) = "\x02\x00\x00\x00'
	run "$DUMP" -i /big "$T/img"
	assert_line --regexp '^Attributes \(in block [0-9]+\):$'
	run "$DEBUG" -R "stat /dir/file" "$T/img"
	assert_line --partial "Mode:  0664" # the mask's bits
	run "$FSCK" -fn "$T/img"
	assert_success
	mkdir "$T/out"
	run "$DEBUG" -R "rdump / $T/out" "$T/img"
	assert_success
	getfattr -R -d -m - --absolute-names "$T/out" 2>/dev/null | sed "s|$T/out|TREE|" >"$T/got"
	getfacl -R --absolute-names "$T/out" 2>/dev/null | sed "s|$T/out|TREE|" >"$T/got-acl"
	run diff -u "$T/want" "$T/got"
	assert_success
	run diff -u "$T/want-acl" "$T/got-acl"
	assert_success
}

@test "mkfs.sufs -d counts the blocks that attributes need, and copies none with -O ^xattr" {
	acl_tree
	mkdir "$T/many"
	for i in $(seq 1 300); do
		: >"$T/many/f$i"
		setfattr -n user.x -v "$(long 100)" "$T/many/f$i"
	done
	run --separate-stderr "$MKFS" -q -b 1024 -N 400 -d "$T/many" "$T/small" 256K
	assert_failure 8
	[[ $stderr == *"attribute blocks alone need 300 blocks"* ]]
	run "$MKFS" -q -b 1024 -O ^xattr -d "$SRC" "$T/img" 8M
	assert_success
	assert_output --partial "extended attributes not copied"
	run "$DEBUG" -R "ea_list /dir/file" "$T/img"
	assert_output ""
}

@test "a snapshot keeps the attributes it saw; the export has them, the image the new ones" {
	fresh
	replay "$IMG" "setxattr /f user.a old" "setxattr /d user.big $(long 300)" "setxattr /d user.s s"
	"$SNAP" create "$IMG" before
	replay "$IMG" "setxattr /f user.a new" "setxattr /d user.s changed-in-place" \
		"rmxattr /d user.big" "setxattr /f user.c $(long 100)"
	"$SNAP" export "$IMG" before "$T/export"
	run "$DEBUG" -R "ea_list /f" "$T/export"
	assert_output 'user.a (3) = "old"'
	run "$DEBUG" -R "ea_get /d user.s" "$T/export"
	assert_output '"s"'
	run "$DEBUG" -R "ea_get -s 0 /d user.big" "$T/export"
	assert_output "300"
	run "$DEBUG" -R "ea_get /d user.s" "$IMG"
	assert_output '"changed-in-place"'
	run "$FSCK" -fn "$T/export"
	assert_success
	run "$FSCK" -fn "$IMG"
	assert_success
}

@test "sufs-dump -m saves attribute blocks: a restored image shows every attribute" {
	fresh
	replay "$IMG" "setxattr /f user.a 1" "setxattr /d user.big $(long 300)"
	"$DUMP" -m "$T/meta" "$IMG"
	"$DUMP" --restore "$T/meta" "$T/restored"
	run "$DEBUG" -R "ea_get -s 0 /d user.big" "$T/restored"
	assert_output "300"
	run "$FSCK" -fn "$T/restored"
	assert_success
}

@test "an attribute block nothing names is a leak: fsck.sufs -L and -b free it" {
	fresh
	replay "$IMG" "setxattr /f user.big $(long 300)"
	blk=$("$DEBUG" -R "stat /f" "$IMG" | sed -n 's/^File ACL: //p')
	[ "$blk" -gt 0 ]
	"$DEBUG" -w -R "sif /f xattr_block 0" "$IMG"
	cp "$IMG" "$T/copy"
	run "$FSCK" -f -L -y "$IMG"
	[ "$status" -eq 1 ]
	assert_output --partial "Block $blk marked in use but used by nothing.  Free? yes"
	run "$FSCK" -fn "$IMG"
	assert_success
	run "$FSCK" -b "$T/copy"
	assert_output --partial "Block $blk marked in use but used by nothing"
	run "$FSCK" -fn "$T/copy"
	assert_success
}

@test "an image with a read-only feature this version does not know: -n checks it, a repair is refused and nothing is written" {
	fresh
	"$DEBUG" -w -R "ssv features_ro_compat 0x80000001" "$IMG"
	sum=$(sha "$IMG")
	run "$FSCK" -fn "$IMG"
	assert_success
	run "$FSCK" -fy "$IMG"
	assert_failure 8
	assert_output --partial "may only read"
	run "$REPLAY" "$IMG" - <<<"create /g"
	assert_failure
	assert_output --partial "may only read"
	[ "$(sha "$IMG")" = "$sum" ]
	run "$DEBUG" -R "ls /" "$IMG"
	assert_success
}
