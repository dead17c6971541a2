/* SPDX-License-Identifier: MIT OR Apache-2.0 */
#pragma once

/* The service manager on the bus: the destination, object and interface of its calls. */
#define SD_DEST "org.freedesktop.systemd1"
#define SD_PATH "/org/freedesktop/systemd1"
#define SD_MANAGER "org.freedesktop.systemd1.Manager"
