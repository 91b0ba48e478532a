/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tern on ns-3: the NIC model as an ns-3 NetDevice, the fabric's switch model as an ns-3
 * switch, and the link that joins them (Documentation/fabric.rst, "tern on ns-3").
 *
 *  TernNetDevice   one host: a real model/lib instance (firmware, RoCEv2 transport, MAC with
 *                  PFC, DCQCN) with the model's minimal host driver (tn_host.h), on ns-3's
 *                  clock: the model's now_ns is the simulator's time, its one-shot timer an
 *                  ns-3 event; frames the MAC sends go on the link at its line rate.
 *  TernSwitch      model/fabric/switch.c (per-port per-priority FIFOs, shared buffer, RED/ECN,
 *                  PFC XOFF/XON per ingress port and priority, drop counters) driven by
 *                  ns-3 events; one TernSwitchPort device per port.
 *  TernChannel     a full-duplex point-to-point cable with a propagation delay. The sender
 *                  serializes (the NIC's MAC and the switch's egress scheduler each time their
 *                  own line); the channel delivers a frame's last bit @delay after it left.
 *
 * ns-3's PointToPointNetDevice does not fit: it owns the transmit queue and its scheduler
 * (the switch and the NIC MAC must decide when a frame starts: PFC pauses, strict priority,
 * DCQCN pacing), and it carries only protocols it can map on PPP (IPv4/IPv6), not MAC
 * control (PFC, 0x8808) frames. TernChannel is the smallest channel that carries whole
 * Ethernet frames between two devices that schedule their own line.
 */
#ifndef TERN_NS3_H
#define TERN_NS3_H

#include <cstdint>
#include <functional>
#include <vector>

#include <ns3/channel.h>
#include <ns3/event-id.h>
#include <ns3/mac48-address.h>
#include <ns3/net-device.h>
#include <ns3/node.h>
#include <ns3/nstime.h>
#include <ns3/packet.h>

#include "switch.h"
#include "tn_host.h"

namespace ns3
{

/* The models' clock is ns-3's time plus this (the model and the switch never see 0). */
constexpr uint64_t kTernEpochNs = 1000000000ull;
uint64_t TernNowNs();

class TernChannel;

/* A device on a TernChannel: the NetDevice boilerplate the NIC and the switch ports share. */
class TernLinkDevice : public NetDevice
{
  public:
    static TypeId GetTypeId();
    TernLinkDevice();
    ~TernLinkDevice() override;

    bool Attach(Ptr<TernChannel> ch);
    /* The last bit of @p arrived from the cable (called by the channel). */
    virtual void ReceiveFrame(Ptr<Packet> p) = 0;

    void SetIfIndex(const uint32_t index) override;
    uint32_t GetIfIndex() const override;
    Ptr<Channel> GetChannel() const override;
    void SetAddress(Address address) override;
    Address GetAddress() const override;
    bool SetMtu(const uint16_t mtu) override;
    uint16_t GetMtu() const override;
    bool IsLinkUp() const override;
    void AddLinkChangeCallback(Callback<void> callback) override;
    bool IsBroadcast() const override;
    Address GetBroadcast() const override;
    bool IsMulticast() const override;
    Address GetMulticast(Ipv4Address multicastGroup) const override;
    Address GetMulticast(Ipv6Address addr) const override;
    bool IsBridge() const override;
    bool IsPointToPoint() const override;
    /* No IP stack above: traffic comes from the RDMA host (NIC) or the switch. */
    bool Send(Ptr<Packet> packet, const Address& dest, uint16_t protocolNumber) override;
    bool SendFrom(Ptr<Packet> packet,
                  const Address& source,
                  const Address& dest,
                  uint16_t protocolNumber) override;
    Ptr<Node> GetNode() const override;
    void SetNode(Ptr<Node> node) override;
    bool NeedsArp() const override;
    void SetReceiveCallback(ReceiveCallback cb) override;
    void SetPromiscReceiveCallback(PromiscReceiveCallback cb) override;
    bool SupportsSendFrom() const override;

  protected:
    void DoDispose() override;
    /* Put @p on the cable; its last bit leaves at @lastBitNs (ns-3 time, ns). */
    bool Transmit(Ptr<Packet> p, uint64_t lastBitNs);

    Ptr<Node> m_node;
    Ptr<TernChannel> m_channel;
    uint32_t m_ifIndex = 0;
    Mac48Address m_address;
    uint16_t m_mtu = 9000;
};

class TernChannel : public Channel
{
  public:
    static TypeId GetTypeId();
    TernChannel();

    bool Attach(Ptr<TernLinkDevice> dev);
    void SetDelay(Time d);
    Time GetDelay() const;
    /* Frames sent by @from take up to @max longer, uniformly (seeded splitmix64), in order
     * (a frame never overtakes the one before): tern-sim's --jitter-ns. 0: none. */
    void SetJitter(Ptr<TernLinkDevice> from, Time max, uint64_t seed);
    /* @p's last bit leaves @src at @lastBitNs: it reaches the other end @delay later. */
    void Transmit(Ptr<TernLinkDevice> src, Ptr<Packet> p, uint64_t lastBitNs);

    std::size_t GetNDevices() const override;
    Ptr<NetDevice> GetDevice(std::size_t i) const override;

  protected:
    void DoDispose() override;

  private:
    Ptr<TernLinkDevice> m_dev[2];
    Time m_delay;
    uint64_t m_jitterNs[2] = {0, 0};	/* per sending end */
    uint64_t m_rng[2] = {0, 0};
    int64_t m_lastArrival[2] = {0, 0};
};

class TernNetDevice : public TernLinkDevice
{
  public:
    static TypeId GetTypeId();
    TernNetDevice();
    ~TernNetDevice() override;

    /* Bring up host @idx (< TN_MAX_HOSTS, unique in the simulation) with @p. */
    bool Setup(unsigned int idx, const tn_nic_params& p);
    struct tn_host* Host() const;
    uint32_t LinkMbps() const;
    /* Send one broadcast from this NIC's MAC (EtherType 0x88b5) so that the switches learn
     * where it is before the flows start, as a gratuitous ARP would. */
    void Announce();

    void ReceiveFrame(Ptr<Packet> p) override;

    uint64_t RefusedFrames() const;	/* frames the NIC could not take */
    uint64_t TxFrames() const;

  protected:
    void DoDispose() override;

  private:
    static uint64_t EnvNow(void* ctx);
    static void EnvTimerArm(void* ctx, uint64_t deadline);
    static void EnvTx(void* ctx, const void* frame, size_t len);
    void OnTimer();
    void SendOnLine(const uint8_t* frame, size_t len);

    struct tn_host* m_host = nullptr;
    uint32_t m_linkMbps = 0;
    uint64_t m_lineFree = 0;	/* ns-3 ns: the NIC's line is busy until then */
    EventId m_timer;
    uint64_t m_refused = 0, m_txFrames = 0, m_txNoLink = 0;
};

class TernSwitch;

class TernSwitchPort : public TernLinkDevice
{
  public:
    static TypeId GetTypeId();
    void SetSwitch(TernSwitch* sw, unsigned int port);
    void ReceiveFrame(Ptr<Packet> p) override;
    bool Send(Ptr<Packet> p, uint64_t lastBitNs);

  private:
    TernSwitch* m_sw = nullptr;
    unsigned int m_port = 0;
};

class TernSwitch : public Object
{
  public:
    static TypeId GetTypeId();
    TernSwitch();
    ~TernSwitch() override;

    /* A switch of @cfg.nports ports on @node; cfg.delay_ns is ignored (the cables have
     * theirs). The ports are devices of @node, to Attach to channels. */
    bool Setup(Ptr<Node> node, const tsw_config& cfg);
    Ptr<TernSwitchPort> GetPort(unsigned int port) const;
    unsigned int GetNPorts() const;
    const struct tsw* Model() const;
    struct tsw* ModelMut(); /* to add routes (tsw_route_add) before the run */

    /* Called for every frame the switch starts sending on a port (its first bit, now). */
    using EgressHook = std::function<void(unsigned int port, const uint8_t* frame, size_t len)>;
    void SetEgressHook(EgressHook h);

    void Rx(unsigned int port, Ptr<Packet> p);

  protected:
    void DoDispose() override;

  private:
    static void HostDeliver(void* opaque,
                            unsigned int port,
                            const void* frame,
                            size_t len,
                            uint64_t arrive_ns);
    static uint64_t HostNow(void* opaque);
    static void HostTimerArm(void* opaque, uint64_t deadline);
    void OnTimer();

    struct tsw* m_sw = nullptr;
    std::vector<Ptr<TernSwitchPort>> m_ports;
    EventId m_timer;
    EgressHook m_hook;
};

/* Cable @a and @b with a TernChannel of propagation delay @delay. */
Ptr<TernChannel> TernConnect(Ptr<TernLinkDevice> a, Ptr<TernLinkDevice> b, Time delay);

} // namespace ns3

#endif /* TERN_NS3_H */
