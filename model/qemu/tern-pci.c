/*
 * tern: QEMU PCIe adapter for the tern RoCEv2 NIC device model.
 *
 * This file only plugs the model library (model/include/tern_model.h) into
 * QEMU: BAR accesses, bus-master DMA, MSI-X, the NIC backend, a bottom half,
 * a virtual-clock timer and logging. Everything about registers and device
 * behaviour lives in the model.
 *
 * Where the model runs: a doorbell write (BAR2) that gives the model work runs
 * it at once, in the vCPU thread's MMIO callback, so a posted send reaches
 * the wire without waking the main loop (Documentation/performance.rst). QEMU
 * holds the BQL around MMIO callbacks, bottom halves, timers and the NIC's
 * receive callback, so the model still sees one context at a time; the
 * device's reentrancy guard is engaged during the callback as it is during
 * the bottom half, NIC receive, the timer, link changes and reset, so the
 * model's DMA cannot reach its own BARs (and the model refuses nested entry
 * by itself as well). Work that a run leaves over (a budget spent, the MAC
 * busy) goes to the bottom half.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/cutils.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "qemu/module.h"
#include "qemu/timer.h"
#include "qapi/error.h"
#include "hw/pci/msix.h"
#include "hw/pci/pci.h"
#include "hw/pci/pcie.h"
#include "hw/qdev-properties.h"
#include "hw/resettable.h"
#include "migration/vmstate.h"
#include "net/net.h"

#include "tern_model.h"
#include <linux/tern/tern_hw.h>

#include "trace.h"

#define TYPE_TERN "tern"
OBJECT_DECLARE_SIMPLE_TYPE(TernState, TERN)

/* PCI Express capability offset (MSI-X finds a free slot by itself). */
#define TERN_QEMU_PCIE_CAP 0x80
/* Advanced Error Reporting, first in extended config space (QEMU's pcie_aer_inject_error) */
#define TERN_QEMU_AER_CAP 0x100

/* Line rate (property "speed", Mb/s): default and largest accepted value. */
#define TERN_QEMU_DEFAULT_SPEED 25000
#define TERN_QEMU_MAX_SPEED 400000

/* BAR0 and BAR2: 64-bit, non-prefetchable memory. */
#define TERN_QEMU_BAR_TYPE \
    (PCI_BASE_ADDRESS_SPACE_MEMORY | PCI_BASE_ADDRESS_MEM_TYPE_64)

struct TernState {
    PCIDevice parent_obj;

    MemoryRegion regs;              /* BAR TERN_BAR_REGS */
    MemoryRegion db;                /* BAR TERN_BAR_DB */

    NICState *nic;
    NICConf conf;
    char *serial;
    bool test_hooks;
    uint32_t speed;                 /* line rate, Mb/s (property "speed") */
    uint32_t cmd_timeout;           /* TERN_REG_CMD_TIMEOUT, ms (property "cmd-timeout") */
    bool db_inline;                 /* run the model in the doorbell's MMIO write */

    /*
     * Set while tern_model_mmio_write() handles a doorbell with db_inline:
     * host.kick then only notes that work is due (db_kicked), and the MMIO
     * callback runs the model once the write is done. BQL.
     */
    bool in_db;
    bool db_kicked;

    QEMUBH *bh;                     /* runs tern_model_run() after host.kick */
    QEMUTimer *timer;               /* the model's one-shot timer */

    struct tern_model_host host;
    struct tern_model *model;
};

/* ---- BARs ------------------------------------------------------------ */

static uint64_t tern_regs_read(void *opaque, hwaddr addr, unsigned size)
{
    TernState *s = opaque;

    return tern_model_mmio_read(s->model, TERN_BAR_REGS, addr, size);
}

static void tern_regs_write(void *opaque, hwaddr addr, uint64_t val,
                            unsigned size)
{
    TernState *s = opaque;

    tern_model_mmio_write(s->model, TERN_BAR_REGS, addr, val, size);
}

static uint64_t tern_db_read(void *opaque, hwaddr addr, unsigned size)
{
    TernState *s = opaque;

    return tern_model_mmio_read(s->model, TERN_BAR_DB, addr, size);
}

static void tern_db_write(void *opaque, hwaddr addr, uint64_t val,
                          unsigned size)
{
    TernState *s = opaque;

    trace_tern_db_write(addr, val);
    if (!s->db_inline) {
        tern_model_mmio_write(s->model, TERN_BAR_DB, addr, val, size);
        return;
    }
    s->in_db = true;
    s->db_kicked = false;
    tern_model_mmio_write(s->model, TERN_BAR_DB, addr, val, size);
    s->in_db = false;
    if (s->db_kicked) {
        /* The model's context: the BQL is held, the write has returned. */
        trace_tern_run(1);
        tern_model_run(s->model);
    }
}

static const MemoryRegionOps tern_regs_ops = {
    .read = tern_regs_read,
    .write = tern_regs_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 1,
        .max_access_size = 8,
    },
    .impl = {
        .min_access_size = 1,
        .max_access_size = 8,
    },
};

static const MemoryRegionOps tern_db_ops = {
    .read = tern_db_read,
    .write = tern_db_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 1,
        .max_access_size = 8,
    },
    .impl = {
        .min_access_size = 1,
        .max_access_size = 8,
    },
};

/* ---- host callbacks for the model ------------------------------------- */

/*
 * DMA through the device's bus-master address space: it is empty while the
 * guest has bus mastering disabled, so such accesses fail like unbacked
 * addresses do.
 */
static int tern_host_dma_read(void *opaque, uint64_t addr, void *buf,
                              size_t len)
{
    TernState *s = opaque;

    return pci_dma_read(PCI_DEVICE(s), addr, buf, len) == MEMTX_OK ? 0 : -EIO;
}

static int tern_host_dma_write(void *opaque, uint64_t addr, const void *buf,
                               size_t len)
{
    TernState *s = opaque;

    return pci_dma_write(PCI_DEVICE(s), addr, buf, len) == MEMTX_OK ?
           0 : -EIO;
}

static void tern_host_msix_notify(void *opaque, unsigned int vector)
{
    PCIDevice *pdev = PCI_DEVICE(opaque);

    if (vector >= TERN_MAX_MSIX) {
        qemu_log_mask(LOG_GUEST_ERROR, "tern: model raised MSI-X vector %u\n",
                      vector);
        return;
    }
    if (msix_enabled(pdev)) {
        trace_tern_msix(vector);
        msix_notify(pdev, vector);
    }
}

static void tern_host_tx_frame(void *opaque, const void *frame, size_t len)
{
    TernState *s = opaque;

    if (s->nic && len <= INT_MAX) {
        trace_tern_tx_frame(len);
        qemu_send_packet(qemu_get_queue(s->nic), frame, len);
    }
}

static void tern_host_kick(void *opaque)
{
    TernState *s = opaque;

    if (s->in_db) {
        s->db_kicked = true;    /* tern_db_write() runs the model next */
        return;
    }
    qemu_bh_schedule(s->bh);
}

static void tern_host_rx_ready(void *opaque)
{
    TernState *s = opaque;

    if (s->nic) {
        qemu_flush_queued_packets(qemu_get_queue(s->nic));
    }
}

static uint64_t tern_host_now_ns(void *opaque)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

static void tern_host_timer_arm(void *opaque, uint64_t deadline_ns)
{
    TernState *s = opaque;

    if (deadline_ns == UINT64_MAX) {
        timer_del(s->timer);
    } else {
        timer_mod(s->timer, MIN(deadline_ns, (uint64_t)INT64_MAX));
    }
}

static void tern_host_log(void *opaque, enum tern_model_log_level level,
                          const char *msg)
{
    TernState *s = opaque;

    if (level <= TERN_MODEL_LOG_WARN) {
        qemu_log_mask(LOG_GUEST_ERROR, "tern %s: %s\n",
                      DEVICE(s)->id ? DEVICE(s)->id : "(no id)", msg);
    } else {
        trace_tern_model_log(level, msg);
    }
}

/*
 * Engage the device's reentrancy guard around a call into the model that QEMU
 * does not already guard (MMIO callbacks, the bottom half and NIC receive are):
 * the timer, a link change and reset. With it engaged, the model's own DMA or
 * an MSI-X message aimed at its BARs fails in QEMU's memory core instead of
 * re-entering the model (which refuses nesting by itself as well). Returns
 * whether this call engaged it, for tern_guard_release().
 */
static bool tern_guard_engage(TernState *s)
{
    MemReentrancyGuard *g = &DEVICE(s)->mem_reentrancy_guard;

    if (g->engaged_in_io) {
        return false;
    }
    g->engaged_in_io = true;
    return true;
}

static void tern_guard_release(TernState *s, bool engaged)
{
    if (engaged) {
        DEVICE(s)->mem_reentrancy_guard.engaged_in_io = false;
    }
}

static void tern_bh(void *opaque)
{
    TernState *s = opaque;

    trace_tern_run(0);
    tern_model_run(s->model);
}

static void tern_timer(void *opaque)
{
    TernState *s = opaque;
    bool engaged = tern_guard_engage(s);

    tern_model_timer(s->model);
    tern_guard_release(s, engaged);
}

/* ---- the wire -------------------------------------------------------- */

static ssize_t tern_net_receive(NetClientState *nc, const uint8_t *buf,
                                size_t size)
{
    TernState *s = qemu_get_nic_opaque(nc);

    trace_tern_rx_frame(size);
    /* 0 makes QEMU queue the frame until host.rx_ready flushes the queue. */
    return tern_model_rx_frame(s->model, buf, size);
}

static void tern_net_link_status_changed(NetClientState *nc)
{
    TernState *s = qemu_get_nic_opaque(nc);
    bool engaged = tern_guard_engage(s);

    tern_model_set_link(s->model, !nc->link_down);
    tern_guard_release(s, engaged);
}

static NetClientInfo tern_net_info = {
    .type = NET_CLIENT_DRIVER_NIC,
    .size = sizeof(NICState),
    .receive = tern_net_receive,
    .link_status_changed = tern_net_link_status_changed,
};

/* ---- PCI device ------------------------------------------------------ */

static void tern_write_config(PCIDevice *pdev, uint32_t addr, uint32_t val,
                              int len)
{
    pci_default_write_config(pdev, addr, val, len);
    pcie_cap_flr_write_config(pdev, addr, val, len);
}

/*
 * The properties into the model's configuration: the MAC (QEMU's default if
 * unset), the serial (made from the MAC if unset), the speed and the command
 * timeout, each checked against what the model accepts.
 */
static bool tern_realize_config(TernState *s, struct tern_model_config *cfg,
                                Error **errp)
{
    const uint8_t *mac;

    qemu_macaddr_default_if_unset(&s->conf.macaddr);
    mac = s->conf.macaddr.a;
    memcpy(cfg->mac, mac, sizeof(cfg->mac));
    if (!s->serial) {
        s->serial = g_strdup_printf("TRN%02X%02X%02X", mac[3], mac[4], mac[5]);
    }
    if (strlen(s->serial) >= sizeof(cfg->serial)) {
        error_setg(errp, "tern: serial '%s' is longer than %zu characters",
                   s->serial, sizeof(cfg->serial) - 1);
        return false;
    }
    pstrcpy(cfg->serial, sizeof(cfg->serial), s->serial);
    if (!s->speed || s->speed > TERN_QEMU_MAX_SPEED) {
        error_setg(errp, "tern: speed %" PRIu32 " Mb/s is out of range (1..%u)",
                   s->speed, TERN_QEMU_MAX_SPEED);
        return false;
    }

    if (s->cmd_timeout < TERN_TIMEOUT_MIN_MS || s->cmd_timeout > TERN_TIMEOUT_MAX_MS) {
        error_setg(errp, "tern: cmd-timeout %" PRIu32 " ms is out of range (%u..%u)",
                   s->cmd_timeout, TERN_TIMEOUT_MIN_MS, TERN_TIMEOUT_MAX_MS);
        return false;
    }
    return true;
}

/* BAR TERN_BAR_REGS (the registers) and BAR TERN_BAR_DB (the doorbells). */
static void tern_realize_bars(TernState *s, PCIDevice *pdev)
{
    memory_region_init_io(&s->regs, OBJECT(s), &tern_regs_ops, s,
                          "tern-regs", TERN_BAR_REGS_SIZE);
    pci_register_bar(pdev, TERN_BAR_REGS, TERN_QEMU_BAR_TYPE, &s->regs);
    memory_region_init_io(&s->db, OBJECT(s), &tern_db_ops, s,
                          "tern-db", TERN_BAR_DB_SIZE);
    pci_register_bar(pdev, TERN_BAR_DB, TERN_QEMU_BAR_TYPE, &s->db);
}

/*
 * The bottom half and the timer, then the model on top of them (it may kick
 * or arm its timer at once). On failure the caller frees the first two.
 */
static bool tern_realize_model(TernState *s, DeviceState *dev,
                               const struct tern_model_config *cfg,
                               Error **errp)
{
    s->bh = qemu_bh_new_guarded(tern_bh, s, &dev->mem_reentrancy_guard);
    s->timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, tern_timer, s);

    s->host = (struct tern_model_host) {
        .opaque = s,
        .dma_read = tern_host_dma_read,
        .dma_write = tern_host_dma_write,
        .msix_notify = tern_host_msix_notify,
        .tx_frame = tern_host_tx_frame,
        .kick = tern_host_kick,
        .rx_ready = tern_host_rx_ready,
        .now_ns = tern_host_now_ns,
        .timer_arm = tern_host_timer_arm,
        .log = tern_host_log,
    };
    s->model = tern_model_create(&s->host, cfg);
    if (!s->model) {
        error_setg(errp, "tern: cannot create the device model");
        return false;
    }
    return true;
}

/*
 * In stages, as igb and e1000e: the configuration, PCI Express with FLR and
 * AER, the BARs, MSI-X, the model, the network backend. A stage that fails
 * unwinds the ones before it, in reverse, at the end.
 */
static void tern_realize(PCIDevice *pdev, Error **errp)
{
    TernState *s = TERN(pdev);
    DeviceState *dev = DEVICE(pdev);
    struct tern_model_config cfg = {
        .test_hooks = s->test_hooks,
        .num_msix = TERN_MAX_MSIX,
        .link_speed_mbps = s->speed,
        /*
         * QEMU's clock is coarse next to a frame time and the host may fall behind the line
         * rate: let the MAC run 64 KiB ahead before it makes senders wait (tern_model.h).
         */
        .tx_burst_bytes = 64 * 1024,
        .cmd_timeout_ms = s->cmd_timeout,
    };
    unsigned int i;

    pdev->config_write = tern_write_config;
    pdev->config[PCI_CLASS_PROG] = TERN_PCI_CLASS & 0xff;

    if (!tern_realize_config(s, &cfg, errp)) {
        return;
    }

    if (pcie_endpoint_cap_init(pdev, TERN_QEMU_PCIE_CAP) < 0) {
        error_setg(errp, "tern: cannot add the PCI Express capability");
        return;
    }
    pcie_cap_flr_init(pdev);
    /* error reporting enables in DevCtl, which AER's messages need (pcie_aer.c) */
    pcie_cap_deverr_init(pdev);
    if (pcie_aer_init(pdev, PCI_ERR_VER, TERN_QEMU_AER_CAP, PCI_ERR_SIZEOF, errp) < 0) {
        goto err_pcie;
    }

    tern_realize_bars(s, pdev);

    if (msix_init_exclusive_bar(pdev, TERN_MAX_MSIX, TERN_BAR_MSIX, errp) < 0) {
        goto err_aer;
    }
    for (i = 0; i < TERN_MAX_MSIX; i++) {
        msix_vector_use(pdev, i);
    }

    if (!tern_realize_model(s, dev, &cfg, errp)) {
        goto err_model;
    }

    s->nic = qemu_new_nic(&tern_net_info, &s->conf,
                          object_get_typename(OBJECT(s)), dev->id,
                          &dev->mem_reentrancy_guard, s);
    qemu_format_nic_info_str(qemu_get_queue(s->nic), s->conf.macaddr.a);
    tern_model_set_link(s->model, !qemu_get_queue(s->nic)->link_down);
    return;

err_model:
    timer_free(s->timer);
    s->timer = NULL;
    qemu_bh_delete(s->bh);
    s->bh = NULL;
    msix_unuse_all_vectors(pdev);
    msix_uninit_exclusive_bar(pdev);
err_aer:
    pcie_aer_exit(pdev);
err_pcie:
    pcie_cap_exit(pdev);
}

static void tern_exit(PCIDevice *pdev)
{
    TernState *s = TERN(pdev);

    /* The NIC first, so no frame arrives while the rest goes away. */
    qemu_del_nic(s->nic);
    s->nic = NULL;
    timer_free(s->timer);
    s->timer = NULL;
    qemu_bh_delete(s->bh);
    s->bh = NULL;
    tern_model_destroy(s->model);
    s->model = NULL;

    msix_unuse_all_vectors(pdev);
    msix_uninit_exclusive_bar(pdev);
    pcie_aer_exit(pdev);
    pcie_cap_exit(pdev);
}

/*
 * Machine reset, bus reset and FLR (pci_device_reset() ends up here): the
 * hold phase of a Resettable reset. The model has nothing to do on entry (no
 * state to mark as resetting before its neighbours reset) or on exit, so all
 * of it happens here, as QEMU 8.0's igb does.
 */
static void tern_reset_hold(Object *obj)
{
    TernState *s = TERN(obj);
    bool engaged;

    /*
     * The timer and a pending bottom half stay as they are: the model keeps
     * track of its own deadline (it cancels it through host.timer_arm) and a
     * spurious tern_model_run() has nothing to do. A reset that comes from
     * inside the model (its DMA reaching configuration space: an FLR) finds
     * the guard engaged; the model then resets once its current work is done.
     */
    engaged = tern_guard_engage(s);
    tern_model_reset(s->model);
    pcie_cap_deverr_reset(PCI_DEVICE(obj));
    /* The carrier belongs to the wire, not to the state a reset forgets. */
    tern_model_set_link(s->model, !qemu_get_queue(s->nic)->link_down);
    tern_guard_release(s, engaged);
}

/*
 * Migration is not supported: the model library has no way to save and
 * restore its state, so refuse to migrate (and to take snapshots) rather than
 * lose that state silently.
 */
static const VMStateDescription tern_vmstate = {
    .name = TYPE_TERN,
    .unmigratable = 1,
};

static Property tern_properties[] = {
    DEFINE_NIC_PROPERTIES(TernState, conf),
    DEFINE_PROP_STRING("serial", TernState, serial),
    DEFINE_PROP_BOOL("test-hooks", TernState, test_hooks, false),
    DEFINE_PROP_UINT32("speed", TernState, speed, TERN_QEMU_DEFAULT_SPEED),
    DEFINE_PROP_UINT32("cmd-timeout", TernState, cmd_timeout, TERN_CMD_TIMEOUT_DEFAULT_MS),
    DEFINE_PROP_BOOL("doorbell-inline", TernState, db_inline, true),
    DEFINE_PROP_END_OF_LIST(),
};

static void tern_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);
    ResettableClass *rc = RESETTABLE_CLASS(klass);

    k->realize = tern_realize;
    k->exit = tern_exit;
    k->vendor_id = TERN_PCI_VENDOR_ID;
    k->device_id = TERN_PCI_DEVICE_ID;
    k->revision = TERN_PCI_REVISION;
    k->class_id = TERN_PCI_CLASS >> 8;
    k->subsystem_vendor_id = TERN_PCI_SUBSYS_VENDOR_ID;
    k->subsystem_id = TERN_PCI_SUBSYS_ID;

    dc->desc = "tern RoCEv2 RDMA NIC";
    rc->phases.hold = tern_reset_hold;
    dc->vmsd = &tern_vmstate;
    device_class_set_props(dc, tern_properties);
    set_bit(DEVICE_CATEGORY_NETWORK, dc->categories);
}

static const TypeInfo tern_info = {
    .name = TYPE_TERN,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(TernState),
    .class_init = tern_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { }
    },
};

static void tern_register_types(void)
{
    type_register_static(&tern_info);
}

type_init(tern_register_types)
