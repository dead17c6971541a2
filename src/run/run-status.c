/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* A run's resource controllers, checked before it starts, and its exit status (run-internal.h). */

#include "plan/unit-properties.h"
#include "run/run-internal.h"

static bool run_word_in(const char *list, const char *word) {
        size_t n = strlen(word);
        for (const char *p = list; (p = strstr(p, word)); p += n)
                if ((p == list || p[-1] == ' ') && (p[n] == 0 || p[n] == ' ' || p[n] == '\n'))
                        return true;
        return false;
}

/* Resource properties are cgroup attributes: without its controller in the user manager's cgroup
 * (not delegated by the system, or a hybrid hierarchy), systemd accepts MemoryMax= or TasksMax=
 * and enforces nothing. A profile's limit is a promise: refuse the run instead. Which property
 * needs which controller is a column of the property table (plan/unit-properties.c). */
int run_check_resource_controllers(RunContext *c, const Plan *plan) {
        const char *needs = NULL, *property = NULL;
        for (size_t i = 0; i < plan->n_properties && !needs; i++)
                if ((needs = unit_property_controller(plan->properties[i].name)))
                        property = plan->properties[i].name;
        if (!needs)
                return 0;

        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *cgroup = NULL;
        int r = sd_bus_get_property_string(c->bus, SD_DEST, SD_PATH, SD_MANAGER, "ControlGroup", &e,
                                           &cgroup);
        if (r < 0)
                return log_error_errno(r, "Failed to read the service manager's control group: %s",
                                       e.message ?: "unknown error");

        char controllers[512] = "";
        static const char * const roots[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
        bool found = false;
        for (size_t i = 0; i < ELEMENTSOF(roots) && !found; i++) {
                _cleanup_free_ char *path = NULL;
                if (asprintf(&path, "%s%s/cgroup.controllers", roots[i], cgroup) < 0)
                        return log_oom();
                FILE *f = fopen(path, "re");
                if (!f)
                        continue;
                found = fgets(controllers, sizeof(controllers), f) != NULL || feof(f);
                fclose(f);
        }
        if (!found)
                return log_error_errno(SYNTHETIC_ERRNO(ENOENT), "Cannot read the controllers of the service "
                                       "manager's control group %s: refusing to run without the limits "
                                       "the profile sets (%s)", cgroup, property);

        for (size_t i = 0; i < plan->n_properties; i++) {
                const char *need = unit_property_controller(plan->properties[i].name);
                if (need && !run_word_in(controllers, need))
                        return log_error_errno(SYNTHETIC_ERRNO(EOPNOTSUPP),
                                               "%s=%s needs the cgroup controller '%s', which the user "
                                               "manager does not have (%s holds: %s): refusing to run the "
                                               "command without the limit", plan->properties[i].name,
                                               plan->properties[i].value, need, cgroup,
                                               controllers[0] && controllers[0] != '\n' ?
                                               strtok(controllers, "\n") : "none");
        }
        return 0;
}

static int run_get_int_property(RunContext *c, const char *iface, const char *name, int32_t *ret) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        return sd_bus_get_property_trivial(c->bus, SD_DEST, c->unit_path, iface, name, &e, 'i', ret);
}

/* The command's exit status as a shell would report it, in *ret_status; or a negative errno
 * once the reason is reported (run.h). */
int run_collect_exit_status(RunContext *c, const Plan *plan, int *ret_status) {
        int32_t code = 0, status = 0;
        int r;

        r = run_get_int_property(c, "org.freedesktop.systemd1.Service", "ExecMainCode", &code);
        if (r >= 0)
                r = run_get_int_property(c, "org.freedesktop.systemd1.Service", "ExecMainStatus", &status);
        if (r < 0)
                return log_error_errno(r, "Failed to read the result of %s: %m", c->unit_name);
        log_debug("%s: job %s, state %s, ExecMainCode=%d ExecMainStatus=%d", c->unit_name,
                  strempty(c->job_result), strempty(c->active_state), (int) code, (int) status);

        /* A start job that did not finish as "done" means either that systemd's setup of the
         * process failed (it then exits with one of its own codes, 200…245, before the
         * command runs) or that the command ran and ended before the job was processed. */
        if (c->failed_to_start) {
                if (code == 0)
                        return log_error_errno(SYNTHETIC_ERRNO(EIO), "the sandbox did not start (%s)",
                                               strempty(c->job_result));
                if (code == CLD_EXITED && status >= 200 && status <= 245)
                        switch (status) {
                        case EXIT_EXEC:
                                return log_error_errno(SYNTHETIC_ERRNO(ENOEXEC),
                                                       "'%s' cannot be executed inside "
                                                       "the sandbox (is it hidden by the profile?)",
                                                       plan->exec_path);
                        case EXIT_CHDIR:
                                return log_error_errno(SYNTHETIC_ERRNO(ENOENT),
                                                       "the working directory '%s' is "
                                                       "not available inside the sandbox",
                                                       strempty(plan->working_directory));
                        case EXIT_NAMESPACE:
                                return log_error_errno(SYNTHETIC_ERRNO(EIO),
                                                       "the sandbox could not be set up "
                                                       "(mount namespace); 'journalctl --user -u %s' may "
                                                       "say why", c->unit_name);
                        default:
                                return log_error_errno(SYNTHETIC_ERRNO(EIO),
                                                       "the sandbox could not be set up "
                                                       "(systemd exit status %d, see systemd.exec(5))",
                                                       (int) status);
                        }
        }

        switch (code) {
        case CLD_KILLED:
        case CLD_DUMPED:
                *ret_status = 128 + (status & 0x7f);
                break;
        default:
                *ret_status = status & 0xff;
        }
        return 0;
}
