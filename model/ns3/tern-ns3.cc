/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tern on ns-3: the NIC device, the switch and the cable (tern-ns3.h). */
#include "tern-ns3.h"

#include "simutil.h"

#include <ns3/log.h>
#include <ns3/simulator.h>

#include <cstring>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("TernNs3");

NS_OBJECT_ENSURE_REGISTERED(TernLinkDevice);
NS_OBJECT_ENSURE_REGISTERED(TernChannel);
NS_OBJECT_ENSURE_REGISTERED(TernNetDevice);
NS_OBJECT_ENSURE_REGISTERED(TernSwitchPort);
NS_OBJECT_ENSURE_REGISTERED(TernSwitch);

static constexpr size_t kMaxFrame = 16384;	/* no tern frame comes near; bounds every copy */
static constexpr size_t kEthZlen = 60;
static constexpr size_t kLineOverhead = 24;	/* preamble, FCS, inter-frame gap */

uint64_t
TernNowNs()
{
    return kTernEpochNs + static_cast<uint64_t>(Simulator::Now().GetNanoSeconds());
}

/* ns-3 delay from now until model time @deadline (0 if it has passed). */
static Time
UntilModelNs(uint64_t deadline)
{
    uint64_t now = TernNowNs();
    return NanoSeconds(deadline > now ? static_cast<int64_t>(deadline - now) : 0);
}

/* Bytes of @p into @buf (at most kMaxFrame); 0 if it does not fit. */
static size_t
FrameBytes(Ptr<Packet> p, uint8_t* buf)
{
    uint32_t n = p->GetSize();
    if (n == 0 || n > kMaxFrame)
        return 0;
    return p->CopyData(buf, n);
}

/* ---- TernLinkDevice ------------------------------------------------------------------- */

TypeId
TernLinkDevice::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::TernLinkDevice").SetParent<NetDevice>().SetGroupName("Tern");
    return tid;
}

TernLinkDevice::TernLinkDevice() = default;
TernLinkDevice::~TernLinkDevice() = default;

void
TernLinkDevice::DoDispose()
{
    m_node = nullptr;
    m_channel = nullptr;
    NetDevice::DoDispose();
}

bool
TernLinkDevice::Attach(Ptr<TernChannel> ch)
{
    if (m_channel || !ch->Attach(this))
        return false;
    m_channel = ch;
    return true;
}

bool
TernLinkDevice::Transmit(Ptr<Packet> p, uint64_t lastBitNs)
{
    if (!m_channel)
        return false;
    m_channel->Transmit(this, p, lastBitNs);
    return true;
}

void
TernLinkDevice::SetIfIndex(const uint32_t index)
{
    m_ifIndex = index;
}

uint32_t
TernLinkDevice::GetIfIndex() const
{
    return m_ifIndex;
}

Ptr<Channel>
TernLinkDevice::GetChannel() const
{
    return m_channel;
}

void
TernLinkDevice::SetAddress(Address address)
{
    m_address = Mac48Address::ConvertFrom(address);
}

Address
TernLinkDevice::GetAddress() const
{
    return m_address;
}

bool
TernLinkDevice::SetMtu(const uint16_t mtu)
{
    m_mtu = mtu;
    return true;
}

uint16_t
TernLinkDevice::GetMtu() const
{
    return m_mtu;
}

bool
TernLinkDevice::IsLinkUp() const
{
    return m_channel != nullptr;
}

void
TernLinkDevice::AddLinkChangeCallback(Callback<void>)
{
}

bool
TernLinkDevice::IsBroadcast() const
{
    return true;
}

Address
TernLinkDevice::GetBroadcast() const
{
    return Mac48Address::GetBroadcast();
}

bool
TernLinkDevice::IsMulticast() const
{
    return true;
}

Address
TernLinkDevice::GetMulticast(Ipv4Address a) const
{
    return Mac48Address::GetMulticast(a);
}

Address
TernLinkDevice::GetMulticast(Ipv6Address a) const
{
    return Mac48Address::GetMulticast(a);
}

bool
TernLinkDevice::IsBridge() const
{
    return false;
}

bool
TernLinkDevice::IsPointToPoint() const
{
    return true;
}

bool
TernLinkDevice::Send(Ptr<Packet>, const Address&, uint16_t)
{
    return false;
}

bool
TernLinkDevice::SendFrom(Ptr<Packet>, const Address&, const Address&, uint16_t)
{
    return false;
}

Ptr<Node>
TernLinkDevice::GetNode() const
{
    return m_node;
}

void
TernLinkDevice::SetNode(Ptr<Node> node)
{
    m_node = node;
}

bool
TernLinkDevice::NeedsArp() const
{
    return false;
}

void
TernLinkDevice::SetReceiveCallback(ReceiveCallback)
{
}

void
TernLinkDevice::SetPromiscReceiveCallback(PromiscReceiveCallback)
{
}

bool
TernLinkDevice::SupportsSendFrom() const
{
    return false;
}

/* ---- TernChannel ---------------------------------------------------------------------- */

TypeId
TernChannel::GetTypeId()
{
    static TypeId tid = TypeId("ns3::TernChannel")
                            .SetParent<Channel>()
                            .SetGroupName("Tern")
                            .AddConstructor<TernChannel>();
    return tid;
}

TernChannel::TernChannel()
    : m_delay(NanoSeconds(1000))
{
}

void
TernChannel::DoDispose()
{
    m_dev[0] = m_dev[1] = nullptr;
    Channel::DoDispose();
}

bool
TernChannel::Attach(Ptr<TernLinkDevice> dev)
{
    for (auto& d : m_dev)
    {
        if (!d)
        {
            d = dev;
            return true;
        }
    }
    return false;
}

void
TernChannel::SetDelay(Time d)
{
    m_delay = d;
}

Time
TernChannel::GetDelay() const
{
    return m_delay;
}

void
TernChannel::SetJitter(Ptr<TernLinkDevice> from, Time max, uint64_t seed)
{
    for (int i = 0; i < 2; i++)
    {
        if (m_dev[i] == from)
        {
            m_jitterNs[i] = max.IsStrictlyPositive() ? max.GetNanoSeconds() : 0;
            m_rng[i] = seed;
        }
    }
}

void
TernChannel::Transmit(Ptr<TernLinkDevice> src, Ptr<Packet> p, uint64_t lastBitNs)
{
    int end = src == m_dev[0] ? 0 : 1;
    Ptr<TernLinkDevice> dst = m_dev[1 - end];
    int64_t now = Simulator::Now().GetNanoSeconds();
    int64_t at = static_cast<int64_t>(lastBitNs) + m_delay.GetNanoSeconds();

    if (!dst || src == dst || src != m_dev[end])
        return;
    if (m_jitterNs[end])
    {
        at += static_cast<int64_t>(sim_splitmix64(&m_rng[end]) % (m_jitterNs[end] + 1));
        if (at < m_lastArrival[end])
            at = m_lastArrival[end];
        m_lastArrival[end] = at;
    }
    Simulator::ScheduleWithContext(dst->GetNode() ? dst->GetNode()->GetId() : 0,
                                   NanoSeconds(at > now ? at - now : 0),
                                   &TernLinkDevice::ReceiveFrame,
                                   dst,
                                   p);
}

std::size_t
TernChannel::GetNDevices() const
{
    return (m_dev[0] ? 1 : 0) + (m_dev[1] ? 1 : 0);
}

Ptr<NetDevice>
TernChannel::GetDevice(std::size_t i) const
{
    return i < 2 ? m_dev[i] : nullptr;
}

Ptr<TernChannel>
TernConnect(Ptr<TernLinkDevice> a, Ptr<TernLinkDevice> b, Time delay)
{
    Ptr<TernChannel> ch = CreateObject<TernChannel>();
    ch->SetDelay(delay);
    if (!a->Attach(ch) || !b->Attach(ch))
        return nullptr;
    return ch;
}

/* ---- TernNetDevice -------------------------------------------------------------------- */

TypeId
TernNetDevice::GetTypeId()
{
    static TypeId tid = TypeId("ns3::TernNetDevice")
                            .SetParent<TernLinkDevice>()
                            .SetGroupName("Tern")
                            .AddConstructor<TernNetDevice>();
    return tid;
}

TernNetDevice::TernNetDevice() = default;

TernNetDevice::~TernNetDevice()
{
    tn_host_destroy(m_host);
}

void
TernNetDevice::DoDispose()
{
    Simulator::Cancel(m_timer);
    tn_host_destroy(m_host);
    m_host = nullptr;
    TernLinkDevice::DoDispose();
}

uint64_t
TernNetDevice::EnvNow(void*)
{
    return TernNowNs();
}

void
TernNetDevice::EnvTimerArm(void* ctx, uint64_t deadline)
{
    auto* d = static_cast<TernNetDevice*>(ctx);

    Simulator::Cancel(d->m_timer);
    if (deadline == UINT64_MAX)
        return;
    d->m_timer = Simulator::Schedule(UntilModelNs(deadline), &TernNetDevice::OnTimer, d);
}

void
TernNetDevice::EnvTx(void* ctx, const void* frame, size_t len)
{
    static_cast<TernNetDevice*>(ctx)->SendOnLine(static_cast<const uint8_t*>(frame), len);
}

void
TernNetDevice::OnTimer()
{
    if (m_host)
        tn_host_timer(m_host);
}

bool
TernNetDevice::Setup(unsigned int idx, const tn_nic_params& p)
{
    tn_env env = {this, &TernNetDevice::EnvNow, &TernNetDevice::EnvTimerArm,
                  &TernNetDevice::EnvTx};
    uint8_t mac[6];

    if (m_host || !p.link_mbps)
        return false;
    m_linkMbps = p.link_mbps;
    m_host = tn_host_create(idx, &p, &env);
    if (!m_host)
        return false;
    tn_host_mac(m_host, mac);
    m_address.CopyFrom(mac);
    return true;
}

struct tn_host*
TernNetDevice::Host() const
{
    return m_host;
}

uint32_t
TernNetDevice::LinkMbps() const
{
    return m_linkMbps;
}

/* The NIC's MAC handed over a frame: it starts when the line is free, at the line rate. */
void
TernNetDevice::SendOnLine(const uint8_t* frame, size_t len)
{
    uint64_t now = static_cast<uint64_t>(Simulator::Now().GetNanoSeconds());
    uint64_t start = m_lineFree > now ? m_lineFree : now;
    size_t wire = len < kEthZlen ? kEthZlen : len;

    if (!len || len > kMaxFrame || !m_linkMbps)
        return;
    m_lineFree = start + (static_cast<uint64_t>(wire) + kLineOverhead) * 8000 / m_linkMbps;
    m_txFrames++;
    if (!Transmit(Create<Packet>(frame, static_cast<uint32_t>(len)), m_lineFree))
        m_txNoLink++;
}

void
TernNetDevice::Announce()
{
    uint8_t f[kEthZlen] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

    m_address.CopyTo(f + 6);
    f[12] = 0x88; /* IEEE local experimental EtherType */
    f[13] = 0xb5;
    SendOnLine(f, sizeof(f));
}

void
TernNetDevice::ReceiveFrame(Ptr<Packet> p)
{
    uint8_t buf[kMaxFrame];
    size_t n = FrameBytes(p, buf);

    if (!m_host || !n)
        return;
    if (!tn_host_rx(m_host, buf, n))
        m_refused++;
}

uint64_t
TernNetDevice::RefusedFrames() const
{
    return m_refused;
}

uint64_t
TernNetDevice::TxFrames() const
{
    return m_txFrames;
}

/* ---- TernSwitchPort, TernSwitch ------------------------------------------------------- */

TypeId
TernSwitchPort::GetTypeId()
{
    static TypeId tid = TypeId("ns3::TernSwitchPort")
                            .SetParent<TernLinkDevice>()
                            .SetGroupName("Tern")
                            .AddConstructor<TernSwitchPort>();
    return tid;
}

void
TernSwitchPort::SetSwitch(TernSwitch* sw, unsigned int port)
{
    m_sw = sw;
    m_port = port;
}

void
TernSwitchPort::ReceiveFrame(Ptr<Packet> p)
{
    if (m_sw)
        m_sw->Rx(m_port, p);
}

bool
TernSwitchPort::Send(Ptr<Packet> p, uint64_t lastBitNs)
{
    return Transmit(p, lastBitNs);
}

TypeId
TernSwitch::GetTypeId()
{
    static TypeId tid = TypeId("ns3::TernSwitch")
                            .SetParent<Object>()
                            .SetGroupName("Tern")
                            .AddConstructor<TernSwitch>();
    return tid;
}

TernSwitch::TernSwitch() = default;

TernSwitch::~TernSwitch()
{
    tsw_destroy(m_sw);
}

void
TernSwitch::DoDispose()
{
    Simulator::Cancel(m_timer);
    tsw_destroy(m_sw);
    m_sw = nullptr;
    for (auto& p : m_ports)
        p->SetSwitch(nullptr, 0);
    m_ports.clear();
    Object::DoDispose();
}

bool
TernSwitch::Setup(Ptr<Node> node, const tsw_config& cfg)
{
    tsw_host host = {this, &TernSwitch::HostDeliver, &TernSwitch::HostNow,
                     &TernSwitch::HostTimerArm};
    tsw_config c = cfg;

    if (m_sw || !node)
        return false;
    c.delay_ns = 0; /* frames are handed over when their last bit leaves; cables add theirs */
    m_sw = tsw_create(&c, &host);
    if (!m_sw)
        return false;
    for (unsigned int i = 0; i < c.nports; i++)
    {
        Ptr<TernSwitchPort> p = CreateObject<TernSwitchPort>();

        p->SetSwitch(this, i);
        p->SetAddress(Mac48Address::Allocate());
        node->AddDevice(p);
        m_ports.push_back(p);
    }
    return true;
}

Ptr<TernSwitchPort>
TernSwitch::GetPort(unsigned int port) const
{
    return port < m_ports.size() ? m_ports[port] : nullptr;
}

unsigned int
TernSwitch::GetNPorts() const
{
    return static_cast<unsigned int>(m_ports.size());
}

const struct tsw*
TernSwitch::Model() const
{
    return m_sw;
}

struct tsw*
TernSwitch::ModelMut()
{
    return m_sw;
}

void
TernSwitch::SetEgressHook(EgressHook h)
{
    m_hook = std::move(h);
}

void
TernSwitch::Rx(unsigned int port, Ptr<Packet> p)
{
    uint8_t buf[kMaxFrame];
    size_t n = FrameBytes(p, buf);

    if (m_sw && n)
        tsw_rx(m_sw, port, buf, n);
}

void
TernSwitch::HostDeliver(void* opaque,
                        unsigned int port,
                        const void* frame,
                        size_t len,
                        uint64_t arrive_ns)
{
    auto* s = static_cast<TernSwitch*>(opaque);

    if (port >= s->m_ports.size() || !len || len > kMaxFrame || arrive_ns < kTernEpochNs)
        return;
    if (s->m_hook)
        s->m_hook(port, static_cast<const uint8_t*>(frame), len);
    s->m_ports[port]->Send(Create<Packet>(static_cast<const uint8_t*>(frame),
                                          static_cast<uint32_t>(len)),
                           arrive_ns - kTernEpochNs);
}

uint64_t
TernSwitch::HostNow(void*)
{
    return TernNowNs();
}

void
TernSwitch::HostTimerArm(void* opaque, uint64_t deadline)
{
    auto* s = static_cast<TernSwitch*>(opaque);

    Simulator::Cancel(s->m_timer);
    if (deadline == UINT64_MAX)
        return;
    s->m_timer = Simulator::Schedule(UntilModelNs(deadline), &TernSwitch::OnTimer, s);
}

void
TernSwitch::OnTimer()
{
    if (m_sw)
        tsw_timer(m_sw);
}

} // namespace ns3
