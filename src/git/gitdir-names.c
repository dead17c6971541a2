/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <string.h>

#include "git/gitdir-names.h"
#include "util/macro.h"

/* git 2.39 to 2.47, from what its commands write (builtin/ and sequencer.c, refs/files-backend.c,
 * bisect.c, rerere.c, gc.c, notes-merge.c, commit-graph.c). */
static const char * const top_names[] = {
        "HEAD", "ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "MERGE_MSG", "MERGE_MODE", "MERGE_RR",
        "MERGE_AUTOSTASH", "AUTO_MERGE", "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD",
        "COMMIT_EDITMSG", "TAG_EDITMSG", "NOTES_EDITMSG", "SQUASH_MSG", "BRANCH_DESCRIPTION",
        "EDIT_DESCRIPTION", "BISECT_LOG", "BISECT_START", "BISECT_TERMS", "BISECT_EXPECTED_REV",
        "BISECT_ANCESTORS_OK", "BISECT_NAMES", "BISECT_HEAD", "BISECT_FIRST_PARENT",
        "NOTES_MERGE_PARTIAL", "NOTES_MERGE_REF", "NOTES_MERGE_WORKTREE",
        "index", "packed-refs", "packed-refs.new", "shallow", "description", "gc.pid", "gc.log",
        "objects", "refs", "logs", "info", "rebase-merge", "rebase-apply", "sequencer", "rr-cache",
        "lfs",
};

/* Made with a unique suffix: the split index's shared part, stash's temporary index. */
static const char * const top_prefixes[] = { "sharedindex.", "index.stash." };

static bool in_list(const char *name, const char * const *list, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (streq(name, list[i]))
                        return true;
        return false;
}

static bool is_lock(const char *name) {
        size_t n = strlen(name);
        /* every file git replaces is written as NAME.lock first, then renamed */
        return n > 5 && streq(name + n - 5, ".lock");
}

bool gitdir_top_name_allowed(const char *name) {
        if (in_list(name, top_names, ELEMENTSOF(top_names)) || is_lock(name))
                return true;
        for (size_t i = 0; i < ELEMENTSOF(top_prefixes); i++)
                if (strncmp(name, top_prefixes[i], strlen(top_prefixes[i])) == 0)
                        return true;
        return false;
}

bool gitdir_objects_info_name_allowed(const char *name) {
        /* What git keeps there is data about the packs (packs, commit-graph, multi-pack-index
         * and their temporary files, named as each version likes): of it, git reads only the
         * alternates as other places to read from. */
        return !streq(name, "alternates") && !streq(name, "http-alternates");
}

bool gitdir_name_is_sequence(const char *name) {
        return streq(name, "rebase-merge") || streq(name, "rebase-apply") || streq(name, "sequencer");
}
