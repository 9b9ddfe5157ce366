/*
 * sufs_test.h - hooks of libsufs for its own tests, not part of its API.
 *
 * Not installed.  sufs-replay's crash harness includes it to prove that
 * the harness catches a broken ordering rule; nothing else should.  The
 * names below may change or go in any release, whatever the library's
 * version says.
 */
#ifndef SUFS_TEST_H
#define SUFS_TEST_H

#include "sufs.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Break one of the ordering rules (doc/ARCHITECTURE.md) so that a crash
 * can leave more than leaks.  1: a new name does not wait for its inode to
 * be initialised; 2: freed blocks and inodes go back to the bitmaps at
 * once, before the old pointers to them are cleared on disk; 3: rename
 * removes the old name without waiting for the new one; 4: a block's new
 * contents do not wait for a snapshot's copy of its old ones.  0 keeps
 * every rule.  Returns 0 or -EINVAL.
 */
int sufs_test_break_rule(struct sufs_fs *fs, unsigned rule);

#ifdef __cplusplus
}
#endif
#endif /* SUFS_TEST_H */
