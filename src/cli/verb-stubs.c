/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Temporary: the configuration subcommands before the policy engine provides them. */
#include "util/log.h"
#include "verbs.h"

static int not_yet(const char *name) {
        log_error("'scudo %s' needs the policy engine, which this build does not have yet", name);
        return 125;
}

int verb_explain(int argc, char **argv) { return not_yet("explain"); }
int verb_check(int argc, char **argv) { return not_yet("check"); }
int verb_profiles(int argc, char **argv) { return not_yet("profiles"); }
int verb_trust(int argc, char **argv) { return not_yet("trust"); }
int verb_untrust(int argc, char **argv) { return not_yet("untrust"); }
int verb_trusted(int argc, char **argv) { return not_yet("trusted"); }
