/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#include "manager-bus.h"
#include "transient-unit.h"
#include "util/macro.h"

int transient_unit_message(sd_bus *bus, const char *name, TransientProperties append, void *userdata,
                           sd_bus_message **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r = sd_bus_message_new_method_call(bus, &m, SD_DEST, SD_PATH, SD_MANAGER, "StartTransientUnit");
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", name, "fail");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "(sv)");
        if (r >= 0)
                r = append(m, userdata);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_append(m, "a(sa(sv))", 0);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}
