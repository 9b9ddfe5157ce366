/*
 * problems.c - the one table of problems the checker knows.
 *
 * A row is a code, a stable name, the pass that finds it, its flags, the
 * question it asks and a message template.  The checker reports every problem
 * through one function, fix_problem(), which reads the row and decides:
 * -n answers no, -y yes, preen fixes only PREEN_OK rows and stops at any
 * other, leak-only fixes only LEAK rows and changes nothing if it meets
 * another.  A leak is what soft updates may leave after a crash: blocks
 * and inodes marked in use that nothing uses, link counts that are too
 * high, summaries that lag behind the bitmaps, names not yet written for
 * new inodes.
 *
 * A leak row that a broken rule could also produce would be a blind spot
 * of the crash harness, which trusts this table: doc/CRASH.md ("Can a
 * leak hide a broken rule?") answers the question for every LEAK row.
 *
 * Placeholders in the templates (problem_make() fills them in):
 *   %i  the inode        %j  another inode     %d  a directory inode
 *   %b  a block          %B  a block range (blk, or blk-blk2)
 *   %I  an inode range   %n  a number          %m  another number
 *   %o  the number in octal                    %s  a string
 *   %t  another string
 */
#include "config.h"
#include "check_int.h"

#include <stdio.h>

#define ROW(code, name, pass, flags, prompt, msg) { code, name, pass, flags, prompt, msg }
#define LEAK (SUFS_PR_LEAK | SUFS_PR_PREEN_OK)

static const struct sufs_problem_def table[] = {
	ROW(SUFS_PR_SB_PRIMARY_BAD, "sb_primary_bad", 0, 0, "Rewrite the primary",
	    "the primary superblock is damaged (%s); using the backup at byte %n"),
	/* -s chose a backup over a sound primary: the check follows the
	 * backup, and the primary is rewritten from it, as e2fsck -b does */
	ROW(SUFS_PR_SB_CHOSEN, "sb_chosen", 0, 0, "Rewrite the primary",
	    "the superblock at byte %n was chosen (-s) over a sound primary"),
	ROW(SUFS_PR_GROUP_DESC_BAD, "group_desc_bad", 0, 0, "Fix",
	    "group %n descriptor is damaged (%s)"),
	ROW(SUFS_PR_SNAP_SLOT_BAD, "snap_slot_bad", 0, 0, "Clear",
	    "snapshot slot %n names inode %i, which is not a snapshot file (%s)"),
	ROW(SUFS_PR_SB_FIELD, "sb_field", 0, 0, "Fix",
	    "superblock field %s is %n, should be %m"),
	ROW(SUFS_PR_SB_CSUM, "sb_csum", 0, 0, "Fix",
	    "the superblock checksum does not match, and there is no good backup"),
	ROW(SUFS_PR_SNAP_SLOT_DUP, "snap_slot_dup", 0, 0, "Clear",
	    "snapshot slots %n and %m both name inode %i"),
	ROW(SUFS_PR_SNAP_UNREADABLE, "snap_unreadable", 0, 0, "Clear",
	    "snapshot slot %n (inode %i) does not read as this file system was (%t: %s)"),

	ROW(SUFS_PR_RESERVED_INODE, "reserved_inode", 1, 0, "Clear",
	    "reserved inode %i is not zero"),
	ROW(SUFS_PR_INODE_ZERO_MODE, "inode_zero_mode", 1, 0, "Clear",
	    "inode %i has mode 0 but is not zeroed"),
	ROW(SUFS_PR_INODE_BAD_MODE, "inode_bad_mode", 1, 0, "Clear",
	    "inode %i has an invalid file type (mode 0%o)"),
	ROW(SUFS_PR_INODE_CSUM, "inode_csum", 1, 0, "Fix",
	    "inode %i checksum does not match its contents"),
	ROW(SUFS_PR_BAD_BLOCK, "bad_block", 1, 0, "Clear",
	    "inode %i block #%n points to %b, outside the data area"),
	/* a partly truncated file (the size went out before the cleared
	 * pointers): blocks nothing can read, a leak as fsck_ffs -p sees it,
	 * but only when all it maps is marked in use and nobody else's */
	ROW(SUFS_PR_BLOCK_PAST_SIZE, "block_past_size", 1, LEAK, "Clear",
	    "inode %i maps block #%n (%b) past its size %m"),
	/* the same where a block under the pointer was freed or reused: the
	 * pointer outlived its block (rule 2 broken), no leak */
	ROW(SUFS_PR_PAST_SIZE_FREE, "past_size_free", 1, 0, "Clear",
	    "inode %i maps block #%n (%b) past its size %m, and %s is marked free"),
	ROW(SUFS_PR_PAST_SIZE_CLAIMED, "past_size_claimed", 1, 0, "Clear",
	    "inode %i maps block #%n (%b) past its size %m, and %s is in use elsewhere"),
	ROW(SUFS_PR_BLOCKS_COUNT, "blocks_count", 1, LEAK, "Fix",
	    "inode %i block count is %n, should be %m"),
	ROW(SUFS_PR_BAD_SYMLINK, "bad_symlink", 1, 0, "Clear",
	    "symbolic link inode %i is invalid (%s)"),
	ROW(SUFS_PR_SPECIAL_DATA, "special_data", 1, 0, "Fix",
	    "special file inode %i has a size or block pointers"),
	ROW(SUFS_PR_DIR_SIZE, "dir_size", 1, 0, "Fix",
	    "directory inode %i size %n is not a whole number of blocks"),
	ROW(SUFS_PR_DIR_NO_BLOCKS, "dir_no_blocks", 1, 0, "Clear",
	    "directory inode %i has size 0"),
	ROW(SUFS_PR_TOO_MANY_BLOCKS, "too_many_blocks", 1, 0, "Clear",
	    "inode %i maps more blocks than the file system has"),
	ROW(SUFS_PR_ROOT_NOT_DIR, "root_not_dir", 1, 0, "Clear",
	    "root inode %i is not a directory (mode 0%o)"),
	ROW(SUFS_PR_DIR_SIZE_PAST_END, "dir_size_past_end", 1, 0, "Fix",
	    "directory inode %i size %n reaches past its last block (#%m)"),
	/* no block map reaches that far: the size is damage, not a hole */
	ROW(SUFS_PR_FILE_SIZE_PAST_MAX, "file_size_past_max", 1, 0, "Fix",
	    "inode %i size %n is past the largest file, %m bytes"),
	/* extended attributes (check/xattr.c): in the inode, or in its block */
	ROW(SUFS_PR_XATTR_INLINE, "xattr_inline", 1, 0, "Clear",
	    "the attributes in inode %i are malformed (%s)"),
	ROW(SUFS_PR_XATTR_BAD_BLOCK, "xattr_bad_block", 1, 0, "Clear",
	    "attribute block %b of inode %i is outside the data area"),
	ROW(SUFS_PR_XATTR_BLOCK_CORRUPT, "xattr_block_corrupt", 1, 0, "Clear",
	    "attribute block %b of inode %i is malformed (%s)"),
	/* the attributes are sound: only the checksum is wrong */
	ROW(SUFS_PR_XATTR_CSUM, "xattr_csum", 1, 0, "Fix",
	    "attribute block %b of inode %i: its checksum does not match"),
	/* no block is shared: each counts the one inode that names it */
	ROW(SUFS_PR_XATTR_REFCOUNT, "xattr_refcount", 1, 0, "Fix",
	    "attribute block %b of inode %i has reference count %n, should be %m"),

	ROW(SUFS_PR_DUP_BLOCK, "dup_block", 1, 0, "Clone",
	    "inode %i block #%n (%b) is claimed more than once"),
	/* asked when a copy was refused or there was no room for one */
	ROW(SUFS_PR_DUP_CLEAR, "dup_clear", 1, 0, "Clear",
	    "inode %i keeps blocks another inode claims too (%s)"),
	ROW(SUFS_PR_XATTR_DUP, "xattr_dup", 1, 0, "Clone",
	    "attribute block %b of inode %i is claimed more than once"),

	ROW(SUFS_PR_DIR_HOLE, "dir_hole", 2, 0, "Fill",
	    "directory inode %i has a hole at block #%n"),
	ROW(SUFS_PR_DIR_BLOCK_CORRUPT, "dir_block_corrupt", 2, 0, "Salvage",
	    "directory inode %i block #%n (%b) is malformed at byte %m (%s)"),
	ROW(SUFS_PR_DIR_CSUM, "dir_csum", 2, 0, "Fix",
	    "directory inode %i block #%n (%b) checksum does not match"),
	ROW(SUFS_PR_NO_DOT, "no_dot", 2, 0, "Fix",
	    "directory inode %i does not start with '.'"),
	ROW(SUFS_PR_BAD_DOT, "bad_dot", 2, 0, "Fix",
	    "'.' in directory inode %i names inode %j"),
	ROW(SUFS_PR_NO_DOTDOT, "no_dotdot", 2, 0, "Fix",
	    "directory inode %i has no '..' after '.'"),
	ROW(SUFS_PR_ENTRY_BAD_NAME, "entry_bad_name", 2, 0, "Clear",
	    "entry in directory inode %d naming inode %i holds '/' or NUL in its name"),
	ROW(SUFS_PR_ENTRY_DOT, "entry_dot", 2, 0, "Clear",
	    "entry '%s' in directory inode %d is a second '.' or '..'"),
	ROW(SUFS_PR_ENTRY_BAD_INO, "entry_bad_ino", 2, 0, "Clear",
	    "entry '%s' in directory inode %d names inode %i, out of range"),
	ROW(SUFS_PR_ENTRY_ROOT, "entry_root", 2, 0, "Clear",
	    "entry '%s' in directory inode %d names the root directory"),
	ROW(SUFS_PR_ENTRY_FREE_INO, "entry_free_ino", 2, 0, "Clear",
	    "entry '%s' in directory inode %d names free inode %i"),
	ROW(SUFS_PR_ENTRY_DIR_LINK, "entry_dir_link", 2, 0, "Clear",
	    "entry '%s' in directory inode %d is a second link to directory inode %i"),
	ROW(SUFS_PR_ENTRY_FTYPE, "entry_ftype", 2, SUFS_PR_PREEN_OK, "Fix",
	    "entry '%s' in directory inode %d has file type %n, should be %m"),
	ROW(SUFS_PR_DIR_STALE_NAME, "dir_stale_name", 2, LEAK, "Clear",
	    "entry '%s' in directory inode %d is a name of directory inode %i left by a rename"),
	/* a crash never leaves two entries of one name: a rename over a name
	 * changes the inode in the existing entry */
	ROW(SUFS_PR_ENTRY_DUP, "entry_dup", 2, 0, "Clear",
	    "entry '%s' in directory inode %d (inode %i) has the name of an earlier entry (inode %j)"),
	ROW(SUFS_PR_ENTRY_DUP_NAME, "entry_dup_name", 2, 0, "Rename",
	    "entry '%s' in directory inode %d (inode %i) has the name of an earlier entry (inode %j); new name '%t'"),

	ROW(SUFS_PR_ROOT_MISSING, "root_missing", 3, 0, "Create",
	    "the root directory is missing"),
	ROW(SUFS_PR_DIR_UNREF_EMPTY, "dir_unref_empty", 3, LEAK, "Clear",
	    "unattached empty directory inode %i"),
	ROW(SUFS_PR_DIR_UNREF, "dir_unref", 3, LEAK, "Connect to /lost+found",
	    "unattached directory inode %i ('..' is %j)"),
	ROW(SUFS_PR_DIR_LOOP, "dir_loop", 3, 0, "Connect to /lost+found",
	    "directory inode %i is in a loop unreachable from the root (its name is in %j)"),
	ROW(SUFS_PR_BAD_DOTDOT, "bad_dotdot", 3, 0, "Fix",
	    "'..' in directory inode %i is %j, should be %d"),
	/* /lost+found is made anew, and what the name held is reconnected to
	 * it in pass 4 if nothing else names it */
	ROW(SUFS_PR_LOST_FOUND_NOT_DIR, "lost_found_not_dir", 3, 0, "Unlink",
	    "/lost+found is not a directory (inode %i)"),

	ROW(SUFS_PR_UNATTACHED_EMPTY, "unattached_empty", 4, LEAK, "Clear",
	    "unattached zero-length inode %i"),
	ROW(SUFS_PR_UNATTACHED, "unattached", 4, SUFS_PR_LEAK, "Connect to /lost+found",
	    "unattached inode %i (size %n)"),
	ROW(SUFS_PR_UNATTACHED_CLEAR, "unattached_clear", 4, LEAK, "Clear",
	    "unattached inode %i (size %n)"),
	ROW(SUFS_PR_LINKS_HIGH, "links_high", 4, LEAK, "Fix",
	    "inode %i link count is %n, should be %m"),
	ROW(SUFS_PR_LINKS_LOW, "links_low", 4, 0, "Fix",
	    "inode %i link count is %n, should be %m"),
	/* the slot is written last when a snapshot is taken, and cleared
	 * first when one is deleted: a crash in either */
	ROW(SUFS_PR_SNAP_ORPHAN, "snap_orphan", 4, LEAK, "Remove",
	    "inode %i is a snapshot file that no slot names (one being taken or deleted)"),
	ROW(SUFS_PR_SNAP_FLAG, "snap_flag", 4, 0, "Clear the flag",
	    "inode %i has the snapshot flag, no slot names it, and it has more than one name"),

	ROW(SUFS_PR_BLOCKS_LEAKED, "blocks_leaked", 5, LEAK, "Free",
	    "block %B marked in use but used by nothing"),
	ROW(SUFS_PR_BLOCKS_UNMARKED, "blocks_unmarked", 5, 0, "Mark in use",
	    "block %B in use but marked free"),
	ROW(SUFS_PR_INODES_LEAKED, "inodes_leaked", 5, LEAK, "Free",
	    "inode %I marked in use but free"),
	ROW(SUFS_PR_INODES_UNMARKED, "inodes_unmarked", 5, 0, "Mark in use",
	    "inode %I in use but marked free"),
	ROW(SUFS_PR_BITMAP_PADDING, "bitmap_padding", 5, SUFS_PR_PREEN_OK, "Fix",
	    "group %n %s bitmap: the bits past the end are not all set"),
	ROW(SUFS_PR_GROUP_COUNTS, "group_counts", 5, LEAK, "Fix",
	    "group %n summary is wrong: %s"),
	ROW(SUFS_PR_SB_COUNTS, "sb_counts", 5, LEAK, "Fix",
	    "superblock summary is wrong: %s"),
};

const struct sufs_problem_def *sufs_problem_table(size_t *count)
{
	*count = sizeof(table) / sizeof(table[0]);
	return table;
}

const struct sufs_problem_def *sufs_problem_def(unsigned code)
{
	size_t i;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].code == code)
			return &table[i];
	return NULL;
}

/* ---- a problem found, from its row --------------------------------------- */

static void put_num(char **p, char *end, const char *fmt, uint64_t v)
{
	int n = snprintf(*p, (size_t)(end - *p), fmt, (unsigned long long)v);
	if (n > 0)
		*p += n < end - *p ? n : end - *p - 1;
}

/* Fill a template in (the placeholders are listed above). */
static void expand(char *out, size_t size, const char *t, const struct pctx *x)
{
	char *p = out, *end = out + size - 1;
	const char *s;

	for (; *t && p < end; t++) {
		if (*t != '%' || !t[1]) {
			*p++ = *t;
			continue;
		}
		switch (*++t) {
		case 'i': put_num(&p, end, "%llu", x->ino); break;
		case 'j': put_num(&p, end, "%llu", x->ino2); break;
		case 'd': put_num(&p, end, "%llu", x->dir); break;
		case 'b': put_num(&p, end, "%llu", x->blk); break;
		case 'n': put_num(&p, end, "%llu", x->num); break;
		case 'm': put_num(&p, end, "%llu", x->num2); break;
		case 'o': put_num(&p, end, "%llo", x->num); break;
		case 'B':
		case 'I': {
			uint64_t a = *t == 'B' ? x->blk : x->ino;
			uint64_t b = *t == 'B' ? x->blk2 : x->ino2;
			if (b > a && p > out && p[-1] == ' ' && p < end) {
				/* the template's noun is singular: "block 7", "blocks 7-9" */
				p[-1] = 's';
				*p++ = ' ';
			}
			put_num(&p, end, "%llu", a);
			if (b > a)
				put_num(&p, end, "-%llu", b);
			break;
		}
		case 's':
		case 't':
			s = *t == 's' ? x->str : x->str2;
			for (s = s ? s : ""; *s && p < end; s++)
				*p++ = *s;
			break;
		default:
			*p++ = *t;
		}
	}
	*p = 0;
}

/* The problem of row d that x is about, as it is reported: its numbers,
 * its name (x->str) and its message. */
void problem_make(struct sufs_problem *p, const struct sufs_problem_def *d, const struct pctx *x)
{
	memset(p, 0, sizeof(*p));
	p->def = d;
	p->ino = x->ino;
	p->blk = x->blk;
	p->ino2 = x->ino2;
	p->dir = x->dir;
	p->blk2 = x->blk2;
	p->num = x->num;
	p->num2 = x->num2;
	if (x->str)
		snprintf(p->name, sizeof(p->name), "%s", x->str);
	expand(p->message, sizeof(p->message), d->message, x);
}
