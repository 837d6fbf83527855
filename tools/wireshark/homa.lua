-- Wireshark dissector for homa-java's Homa over UDP. The layout is docs/wire-format.md, defined by
-- io.homa.core.wire.WireFormat and checked by PacketDecoder: when they change, change this too.
--
-- Load it with `tshark -X lua_script:tools/wireshark/homa.lua ...`, or copy it into Wireshark's
-- personal Lua plugin folder (Help > About > Folders). It decodes the UDP ports of the preference
-- "homa.ports", and any other UDP datagram that starts with the magic "HM" and version 2.
-- Every check of PacketDecoder is repeated here as expert info whose text ends in
-- "[dropped: REASON]", REASON being the DropReason a homa-java receiver counts for the packet.

local MAGIC = 0x484D
local VERSION = 2
local COMMON_HEADER = 12
local DATA_HEADER = 40
local FLAG_RETRANSMIT = 0x01
local GRANT_LENGTH = 20
local RESEND_LENGTH = 24
local RESEND_FLAG_WANTS_UPTIME = 0x01
local UNKNOWN_SINCE_LENGTH = 28
local CUTOFFS_LENGTH = 48
local ACK_HEADER = 16
local ACK_ENTRY = 10
local MAX_ACKS = 5
local PRIORITY_LEVELS = 8
local MAX_PRIORITY = 7
-- The ports scripts/experiment gives Homa; everything else is found by the heuristic.
local DEFAULT_PORTS = "3900,4000-4099"
-- HomaConfig's default maxMessageLength (64 MiB).
local DEFAULT_MAX_MESSAGE = 64 * 1024 * 1024

local DATA, GRANT, RESEND, RPC_UNKNOWN, BUSY, CUTOFFS, FREEZE, NEED_ACK, ACK =
    0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18
-- homa-java's own: a server refused a request unrun, its application being overloaded; a
-- client gave a call up (cancelled, or its deadline passed); a server does not know an RPC and
-- says how long it has been up (so the client can tell whether it restarted since the request).
local OVERLOADED, CANCEL, RPC_UNKNOWN_SINCE = 0x1F, 0x1E, 0x1D

local TYPE_NAMES = {
    [DATA] = "DATA", [GRANT] = "GRANT", [RESEND] = "RESEND", [RPC_UNKNOWN] = "RPC_UNKNOWN",
    [BUSY] = "BUSY", [CUTOFFS] = "CUTOFFS", [NEED_ACK] = "NEED_ACK", [ACK] = "ACK",
    [OVERLOADED] = "OVERLOADED", [CANCEL] = "CANCEL", [RPC_UNKNOWN_SINCE] = "RPC_UNKNOWN_SINCE",
}

local homa = Proto("homa", "Homa over UDP")

local f = {
    magic = ProtoField.uint16("homa.magic", "Magic", base.HEX),
    version = ProtoField.uint8("homa.version", "Version", base.DEC),
    type = ProtoField.uint8("homa.type", "Type", base.HEX, TYPE_NAMES),
    id = ProtoField.uint64("homa.id", "Sender id", base.DEC),
    rpc = ProtoField.uint64("homa.rpc", "RPC (client id)", base.DEC),
    side = ProtoField.string("homa.side", "Sent by"),
    message_length = ProtoField.uint32("homa.message_length", "Message length", base.DEC),
    incoming = ProtoField.uint32("homa.incoming", "Incoming", base.DEC),
    offset = ProtoField.uint32("homa.offset", "Offset", base.DEC),
    cutoff_version = ProtoField.uint16("homa.cutoff_version", "Cutoff version", base.DEC),
    flags = ProtoField.uint8("homa.flags", "Flags", base.HEX),
    retransmit = ProtoField.bool("homa.flags.retransmit", "Retransmission", 8, nil, FLAG_RETRANSMIT),
    ack_id = ProtoField.uint64("homa.ack_id", "Piggy-backed ack id", base.DEC),
    deadline = ProtoField.uint32("homa.deadline", "Deadline, ms left (0: none)", base.DEC),
    payload_length = ProtoField.uint32("homa.payload_length", "Payload length", base.DEC),
    segment_length = ProtoField.uint16("homa.segment_length", "Segment length", base.DEC),
    payload = ProtoField.bytes("homa.payload", "Payload"),
    priority = ProtoField.uint8("homa.priority", "Priority", base.DEC),
    resend_length = ProtoField.int32("homa.resend_length", "Length (-1: all sent so far)", base.DEC),
    resend_flags = ProtoField.uint8("homa.resend_flags", "Flags", base.HEX),
    wants_uptime = ProtoField.bool("homa.resend_flags.wants_uptime", "Wants the server's uptime if unknown", 8, nil,
        RESEND_FLAG_WANTS_UPTIME),
    incarnation = ProtoField.uint64("homa.incarnation", "Server incarnation", base.HEX),
    uptime = ProtoField.uint64("homa.uptime", "Server uptime, ns", base.DEC),
    cutoff = ProtoField.uint32("homa.cutoff", "Cutoff", base.DEC),
    unscheduled = ProtoField.uint32("homa.unscheduled", "Unscheduled bytes accepted per message (0: not said)", base.DEC),
    ack_count = ProtoField.uint8("homa.ack_count", "Ack count", base.DEC),
    ack_client_id = ProtoField.uint64("homa.ack.client_id", "Acked client id", base.DEC),
    ack_server_port = ProtoField.uint16("homa.ack.server_port", "Acked server port", base.DEC),
    reserved = ProtoField.bytes("homa.reserved", "Reserved"),
    gso_segments = ProtoField.uint16("homa.gso.segments", "GSO segments", base.DEC),
    gso_segment_size = ProtoField.uint16("homa.gso.segment_size", "GSO segment size", base.DEC),
}
-- A sealed datagram (HomaConfig.Builder.security, docs/wire-format.md "Sealed datagrams (PSP)"):
-- the PSP header, the readable Homa header, ciphertext, the 16-byte tag.
local PSP_NEXT_HEADER = 0xFD
local PSP_HEADER, PSP_ICV = 16, 16
f.psp = ProtoField.none("homa.psp", "PSP (sealed)")
f.psp_next_header = ProtoField.uint8("homa.psp.next_header", "Next header", base.HEX)
f.psp_ext_length = ProtoField.uint8("homa.psp.ext_length", "Header extension length (8 B units)", base.DEC)
f.psp_crypt_offset = ProtoField.uint8("homa.psp.crypt_offset", "Crypt offset (4 B units)", base.DEC, nil, 0x3F)
f.psp_version = ProtoField.uint8("homa.psp.version", "Version (0: AES-GCM-128, 1: AES-GCM-256)", base.DEC, nil, 0x3C)
f.psp_spi = ProtoField.uint32("homa.psp.spi", "SPI", base.HEX)
f.psp_key_slot = ProtoField.uint8("homa.psp.key_slot", "Master key slot", base.DEC)
f.psp_iv = ProtoField.uint64("homa.psp.iv", "IV", base.DEC)
f.psp_ciphertext = ProtoField.bytes("homa.psp.ciphertext", "Ciphertext")
f.psp_icv = ProtoField.bytes("homa.psp.icv", "ICV (GCM tag)")
homa.fields = f

local MALFORMED, SEQUENCE, PROTOCOL = expert.group.MALFORMED, expert.group.SEQUENCE, expert.group.PROTOCOL
local ERROR, WARN, NOTE, CHAT = expert.severity.ERROR, expert.severity.WARN, expert.severity.NOTE, expert.severity.CHAT
local e = {
    psp_bad = ProtoExpert.new("homa.psp.bad_header", "Bad PSP header", MALFORMED, ERROR),
    too_short = ProtoExpert.new("homa.too_short", "Shorter than the Homa header", MALFORMED, ERROR),
    bad_magic = ProtoExpert.new("homa.bad_magic", "Not Homa's magic", MALFORMED, ERROR),
    bad_version = ProtoExpert.new("homa.bad_version", "Unsupported wire version", MALFORMED, ERROR),
    unknown_type = ProtoExpert.new("homa.unknown_type", "Unknown packet type", MALFORMED, ERROR),
    bad_id = ProtoExpert.new("homa.bad_id", "Invalid RPC id", MALFORMED, ERROR),
    bad_length = ProtoExpert.new("homa.bad_length", "Wrong length for the packet type", MALFORMED, ERROR),
    trailing = ProtoExpert.new("homa.trailing_bytes", "Trailing bytes after the packet", MALFORMED, ERROR),
    too_long = ProtoExpert.new("homa.message_too_long", "Message longer than the receiver accepts", PROTOCOL, WARN),
    beyond = ProtoExpert.new("homa.beyond_message", "Range beyond the message", MALFORMED, ERROR),
    empty = ProtoExpert.new("homa.empty_segment", "Empty segment of a non-empty message", MALFORMED, ERROR),
    bad_flags = ProtoExpert.new("homa.bad_flags", "Undefined flag bits", MALFORMED, ERROR),
    bad_priority = ProtoExpert.new("homa.bad_priority", "Priority above 7", MALFORMED, ERROR),
    bad_ack_count = ProtoExpert.new("homa.bad_ack_count", "ACK count does not fit", MALFORMED, ERROR),
    bad_cutoffs = ProtoExpert.new("homa.bad_cutoffs", "Invalid cutoffs", MALFORMED, ERROR),
    retransmit = ProtoExpert.new("homa.retransmission", "Retransmitted data (answers a RESEND)", SEQUENCE, NOTE),
    resend = ProtoExpert.new("homa.resend", "Receiver asks for data again", SEQUENCE, NOTE),
    unknown_rpc = ProtoExpert.new("homa.rpc_unknown", "Peer does not know this RPC", SEQUENCE, NOTE),
    overloaded = ProtoExpert.new("homa.overloaded", "Server refused the request unrun: overloaded", SEQUENCE, NOTE),
    gso = ProtoExpert.new("homa.gso", "GSO batch captured before segmentation", PROTOCOL, CHAT),
}
homa.experts = e

homa.prefs.ports = Pref.range("UDP ports", DEFAULT_PORTS,
    "UDP ports always decoded as Homa (datagrams on other ports are still found by the heuristic: magic \"HM\", version 2)",
    65535)
homa.prefs.max_message_length = Pref.uint("Largest message length", DEFAULT_MAX_MESSAGE,
    "The receivers' maxMessageLength: longer messages, grants and resends beyond it are flagged")

-- The IP TOS carries a DATA packet's priority (level = TOS >> 5); the packet itself does not.
local ip_dsfield = Field.new("ip.dsfield")
local ipv6_tclass = Field.new("ipv6.tclass")

local function last(...)
    local n = select("#", ...)
    if n == 0 then return nil end
    return (select(n, ...))
end

local function tos_level()
    local ds = last(ip_dsfield()) or last(ipv6_tclass())
    if ds == nil then return nil end
    return math.floor(ds.value / 32) % 8
end

-- A receiver stops at the first failing check and counts its reason; later problems of the same
-- packet are shown too, but only the first names the drop reason.
local reason_given = false

local function problem(item, ex, text, reason)
    if not reason_given then
        text = text .. " [dropped: " .. reason .. "]"
        reason_given = true
    end
    item:add_proto_expert_info(ex, text)
end

-- An id that no RPC uses (0 or 1): the low bit only says which side sent it.
local function id_unused(id)
    return id:higher() == 0 and id:lower() <= 1
end

local function id_odd(id)
    return id:lower() % 2 == 1
end

local function fixed_length(tree, len, want, name)
    if len < want then
        problem(tree, e.bad_length, string.format("%s must be %d bytes, datagram has %d", name, want, len), "BAD_LENGTH")
        return false
    elseif len > want then
        problem(tree, e.trailing, string.format("%d trailing bytes after %s (%d bytes)", len - want, name, want), "BAD_LENGTH")
    end
    return true
end

local function max_message()
    return homa.prefs.max_message_length
end

local function dissect_data(tvb, tree, len)
    if len < DATA_HEADER then
        problem(tree, e.bad_length, string.format("DATA header is %d bytes, datagram has %d", DATA_HEADER, len), "BAD_LENGTH")
        return "(truncated)"
    end
    local message_length = tvb(12, 4):uint()
    local incoming = tvb(16, 4):uint()
    local offset = tvb(20, 4):uint()
    local flags = tvb(26, 1):uint()
    local ack_id = tvb(28, 8):uint64()
    local payload = len - DATA_HEADER
    local ml_item = tree:add(f.message_length, tvb(12, 4))
    local in_item = tree:add(f.incoming, tvb(16, 4))
    local off_item = tree:add(f.offset, tvb(20, 4))
    tree:add(f.cutoff_version, tvb(24, 2))
    local flags_item = tree:add(f.flags, tvb(26, 1))
    flags_item:add(f.retransmit, tvb(26, 1))
    local ack_item = tree:add(f.ack_id, tvb(28, 8))
    -- 24 bits: the high byte at 27, the low 16 bits at 36 (a reserved byte and an unused ack port before)
    local deadline = tvb(27, 1):uint() * 65536 + tvb(36, 2):uint()
    tree:add(f.deadline, tvb(27, 1), deadline):append_text(" (high byte here, low 16 bits at offset 36)")
    local segment = tvb(38, 2):uint()
    local seg_item = tree:add(f.segment_length, tvb(38, 2))
    local pl_item = tree:add(f.payload_length, payload):set_generated()
    if payload > 0 then
        tree:add(f.payload, tvb(DATA_HEADER, payload))
    end
    local level = tos_level()
    if level ~= nil then
        tree:add(f.priority, level):set_generated():append_text(" (from the IP TOS)")
    end
    -- PacketDecoder's order: the first failing check is the receiver's drop reason.
    if message_length > max_message() then
        problem(ml_item, e.too_long, string.format("message of %d bytes, above %d", message_length, max_message()),
            "MESSAGE_TOO_LONG")
    end
    if segment ~= len - DATA_HEADER then
        problem(seg_item, e.bad_length, string.format("segment length %d, but %d payload bytes", segment,
            len - DATA_HEADER), "BAD_LENGTH")
    end
    if incoming > message_length then
        problem(in_item, e.beyond, string.format("incoming %d beyond the %d-byte message", incoming, message_length),
            "BEYOND_MESSAGE")
    end
    if offset + payload > message_length then
        problem(off_item, e.beyond, string.format("segment [%d, %d) beyond the %d-byte message", offset,
            offset + payload, message_length), "BEYOND_MESSAGE")
    end
    if payload == 0 and message_length ~= 0 then
        problem(pl_item, e.empty, "no payload in a non-empty message", "EMPTY_SEGMENT")
    end
    if bit.band(flags, bit.bnot(FLAG_RETRANSMIT)) ~= 0 then
        problem(flags_item, e.bad_flags, string.format("flags 0x%02x", flags), "BAD_FLAGS")
    end
    if id_odd(ack_id) then
        problem(ack_item, e.bad_id, "piggy-backed ack id is odd", "BAD_ID")
    end
    local retransmit = bit.band(flags, FLAG_RETRANSMIT) ~= 0
    if retransmit then
        flags_item:add_proto_expert_info(e.retransmit)
    end
    local info = string.format("off=%d len=%d msg=%d", offset, payload, message_length)
    if level ~= nil then info = info .. " P" .. level end
    if retransmit then info = info .. " rtx" end
    if ack_id:lower() ~= 0 or ack_id:higher() ~= 0 then info = info .. " ack=" .. tostring(ack_id) end
    return info
end

local function dissect_grant(tvb, tree, len)
    if not fixed_length(tree, len, GRANT_LENGTH, "GRANT") then return "(truncated)" end
    local offset = tvb(12, 4):uint()
    local priority = tvb(16, 1):uint()
    local off_item = tree:add(f.offset, tvb(12, 4))
    local prio_item = tree:add(f.priority, tvb(16, 1))
    tree:add(f.reserved, tvb(17, 3))
    if offset > max_message() then
        problem(off_item, e.beyond, string.format("grant offset %d above %d", offset, max_message()), "BEYOND_MESSAGE")
    end
    if priority > MAX_PRIORITY then
        problem(prio_item, e.bad_priority, "priority " .. priority, "BAD_PRIORITY")
    end
    return string.format("off=%d P%d", offset, priority)
end

local function dissect_resend(tvb, tree, len)
    if not fixed_length(tree, len, RESEND_LENGTH, "RESEND") then return "(truncated)" end
    local offset = tvb(12, 4):uint()
    local length = tvb(16, 4):int()
    local priority = tvb(20, 1):uint()
    local off_item = tree:add(f.offset, tvb(12, 4))
    local len_item = tree:add(f.resend_length, tvb(16, 4))
    local prio_item = tree:add(f.priority, tvb(20, 1))
    local flags_item = tree:add(f.resend_flags, tvb(21, 1))
    flags_item:add(f.wants_uptime, tvb(21, 1))
    tree:add(f.reserved, tvb(22, 2))
    if length < -1 then
        problem(len_item, e.bad_length, "resend length " .. length, "BAD_LENGTH")
    elseif offset > max_message() or (length > 0 and offset + length > max_message()) then
        problem(off_item, e.beyond, string.format("resend range beyond %d", max_message()), "BEYOND_MESSAGE")
    end
    if priority > MAX_PRIORITY then
        problem(prio_item, e.bad_priority, "priority " .. priority, "BAD_PRIORITY")
    end
    tree:add_proto_expert_info(e.resend)
    return string.format("off=%d len=%s P%d", offset, length == -1 and "all" or tostring(length), priority)
end

local function dissect_cutoffs(tvb, tree, len)
    if not fixed_length(tree, len, CUTOFFS_LENGTH, "CUTOFFS") then return "(truncated)" end
    local values = {}
    for level = 0, PRIORITY_LEVELS - 1 do
        local range = tvb(12 + 4 * level, 4)
        local item = tree:add(f.cutoff, range):prepend_text("Level " .. level .. " ")
        if range:int() < 0 then
            problem(item, e.bad_cutoffs, "cutoff above 2^31-1", "BAD_CUTOFFS")
        end
        values[#values + 1] = tostring(range:uint())
    end
    local version = tvb(44, 2):uint()
    local v_item = tree:add(f.cutoff_version, tvb(44, 2))
    -- 64-byte units on the wire; shown in bytes
    tree:add(f.unscheduled, tvb(46, 2), tvb(46, 2):uint() * 64)
    if version == 0 then
        problem(v_item, e.bad_cutoffs, "cutoff version 0", "BAD_CUTOFFS")
    end
    return string.format("v%d [%s] unsched=%d", version, table.concat(values, ","), tvb(46, 2):uint() * 64)
end

local function dissect_ack(tvb, tree, len)
    if len < ACK_HEADER then
        problem(tree, e.bad_length, string.format("ACK header is %d bytes, datagram has %d", ACK_HEADER, len), "BAD_LENGTH")
        return "(truncated)"
    end
    local count = tvb(12, 1):uint()
    local count_item = tree:add(f.ack_count, tvb(12, 1))
    tree:add(f.reserved, tvb(13, 3))
    local want = ACK_HEADER + count * ACK_ENTRY
    if count > MAX_ACKS or len ~= want then
        problem(count_item, e.bad_ack_count, string.format("%d entries need %d bytes, datagram has %d (at most %d entries)",
            count, want, len, MAX_ACKS), "BAD_ACK_COUNT")
    end
    local ids = {}
    for k = 0, count - 1 do
        local at = ACK_HEADER + k * ACK_ENTRY
        if at + ACK_ENTRY > len then break end
        local id = tvb(at, 8):uint64()
        local item = tree:add(f.ack_client_id, tvb(at, 8))
        tree:add(f.ack_server_port, tvb(at + 8, 2))
        if id_unused(id) or id_odd(id) then
            problem(item, e.bad_id, "acked client id must be even and non-zero", "BAD_ID")
        end
        ids[#ids + 1] = tostring(id)
    end
    return string.format("count=%d [%s]", count, table.concat(ids, ","))
end

-- One Homa packet in tvb (a whole datagram, or one segment of a GSO batch). Returns its Info
-- text and its subtree.
local function dissect_packet(tvb, root)
    reason_given = false
    local len = tvb:len()
    local tree = root:add(homa, tvb())
    if len < COMMON_HEADER then
        problem(tree, e.too_short, string.format("%d bytes, the header is %d", len, COMMON_HEADER), "TOO_SHORT")
        return "too short", tree
    end
    local magic_item = tree:add(f.magic, tvb(0, 2))
    if tvb(0, 2):uint() ~= MAGIC then
        problem(magic_item, e.bad_magic, string.format("magic 0x%04x, Homa's is 0x%04x", tvb(0, 2):uint(), MAGIC), "BAD_MAGIC")
        return "bad magic", tree
    end
    local version_item = tree:add(f.version, tvb(2, 1))
    if tvb(2, 1):uint() ~= VERSION then
        problem(version_item, e.bad_version, "version " .. tvb(2, 1):uint(), "BAD_VERSION")
        return "bad version " .. tvb(2, 1):uint(), tree
    end
    local code = tvb(3, 1):uint()
    local type_item = tree:add(f.type, tvb(3, 1))
    local name = TYPE_NAMES[code]
    if name == nil then
        problem(type_item, e.unknown_type, code == FREEZE and "FREEZE (0x16) is not supported"
            or string.format("type 0x%02x", code), "UNKNOWN_TYPE")
        return string.format("unknown type 0x%02x", code), tree
    end
    local id = tvb(4, 8):uint64()
    local id_item = tree:add(f.id, tvb(4, 8))
    tree:add(f.rpc, tvb(4, 8), id:band(UInt64(0xFFFFFFFE, 0xFFFFFFFF))):set_generated()
    tree:add(f.side, tvb(4, 8), id_odd(id) and "server" or "client"):set_generated()
    tree:append_text(", " .. name .. ", id " .. tostring(id))
    if id_unused(id) then
        problem(id_item, e.bad_id, "ids 0 and 1 are never used", "BAD_ID")
    end
    local detail
    if code == DATA then
        detail = dissect_data(tvb, tree, len)
    elseif code == GRANT then
        detail = dissect_grant(tvb, tree, len)
    elseif code == RESEND then
        detail = dissect_resend(tvb, tree, len)
    elseif code == CUTOFFS then
        detail = dissect_cutoffs(tvb, tree, len)
    elseif code == ACK then
        detail = dissect_ack(tvb, tree, len)
    elseif code == RPC_UNKNOWN_SINCE then
        if fixed_length(tree, len, UNKNOWN_SINCE_LENGTH, name) then
            tree:add(f.incarnation, tvb(12, 8))
            tree:add(f.uptime, tvb(20, 8))
            tree:add_proto_expert_info(e.unknown_rpc)
            detail = string.format("incarnation=%s uptime=%.3fms", tvb(12, 8):uint64():tohex(),
                tvb(20, 8):uint64():tonumber() / 1e6)
        else
            detail = "(truncated)"
        end
    else
        fixed_length(tree, len, COMMON_HEADER, name)
        if code == RPC_UNKNOWN then tree:add_proto_expert_info(e.unknown_rpc) end
        if code == OVERLOADED then tree:add_proto_expert_info(e.overloaded) end
        detail = nil
    end
    local info = name .. " id=" .. tostring(id)
    if detail then info = info .. " " .. detail end
    return info, tree
end

-- A GSO send reaches a capture taken on the sending host (loopback and veth included) as one
-- datagram holding several packets back to back, every one as long as the first but the last; so
-- does a UDP GRO batch. The first packet's own length (DATA: header plus segment length) is the
-- stride, as io.homa.core.wire.PacketDecoder.packetLength finds it; nil if it is the whole datagram.
local function segment_size(tvb, len)
    if len < COMMON_HEADER then return nil end
    local t = tvb(3, 1):uint()
    local size
    if t == DATA then
        if len < DATA_HEADER then return nil end
        size = DATA_HEADER + tvb(38, 2):uint()
    elseif t == GRANT then size = GRANT_LENGTH
    elseif t == RESEND then size = RESEND_LENGTH
    elseif t == RPC_UNKNOWN or t == BUSY or t == NEED_ACK or t == OVERLOADED or t == CANCEL then size = COMMON_HEADER
    elseif t == RPC_UNKNOWN_SINCE then size = UNKNOWN_SINCE_LENGTH
    elseif t == CUTOFFS then size = CUTOFFS_LENGTH
    elseif t == ACK then
        if len < ACK_HEADER then return nil end
        size = ACK_HEADER + tvb(12, 1):uint() * ACK_ENTRY
    else return nil end
    if size >= len then return nil end
    return size
end

-- One sealed packet at the start of tvb: its fields, the readable Homa header, and its length
-- (the stride of a GSO or GRO datagram of sealed segments), or nil if its header does not say.
local function dissect_sealed(tvb, root)
    local len = tvb:len()
    local tree = root:add(homa, tvb(0, len), "Homa over UDP, sealed (PSP)")
    local psp = tree:add(f.psp, tvb(0, math.min(PSP_HEADER, len)))
    if len < PSP_HEADER + COMMON_HEADER + PSP_ICV then
        psp:add_proto_expert_info(e.psp_bad, "too short for a sealed packet [dropped: SECURITY_BAD_HEADER]")
        return "PSP (too short)", nil
    end
    psp:add(f.psp_next_header, tvb(0, 1))
    psp:add(f.psp_ext_length, tvb(1, 1))
    psp:add(f.psp_crypt_offset, tvb(2, 1))
    psp:add(f.psp_version, tvb(3, 1))
    psp:add(f.psp_spi, tvb(4, 4))
    psp:add(f.psp_key_slot, tvb(4, 1), bit.rshift(tvb(4, 1):uint(), 7)):set_generated()
    psp:add(f.psp_iv, tvb(8, 8))
    local ext = tvb(1, 1):uint() * 8
    local clear = bit.band(tvb(2, 1):uint(), 0x3F) * 4
    local at = PSP_HEADER + ext
    if at + clear + PSP_ICV > len or clear < COMMON_HEADER then
        psp:add_proto_expert_info(e.psp_bad, "crypt offset past the packet [dropped: SECURITY_BAD_HEADER]")
        return "PSP (bad crypt offset)", nil
    end
    local t = tvb(at + 3, 1):uint()
    tree:add(f.type, tvb(at + 3, 1))
    tree:add(f.id, tvb(at + 4, 8))
    local packet
    local info = "sealed " .. (TYPE_NAMES[t] or string.format("0x%02x", t)) .. " id=" .. tostring(tvb(at + 4, 8):uint64())
    if t == DATA and clear >= DATA_HEADER then
        tree:add(f.message_length, tvb(at + 12, 4))
        tree:add(f.offset, tvb(at + 20, 4))
        tree:add(f.segment_length, tvb(at + 38, 2))
        packet = DATA_HEADER + tvb(at + 38, 2):uint()
        info = info .. " off=" .. tvb(at + 20, 4):uint()
    elseif t == ACK and clear >= ACK_HEADER then packet = ACK_HEADER + tvb(at + 12, 1):uint() * ACK_ENTRY
    elseif t == GRANT then packet = GRANT_LENGTH
    elseif t == RESEND then packet = RESEND_LENGTH
    elseif t == RPC_UNKNOWN or t == BUSY or t == NEED_ACK or t == OVERLOADED or t == CANCEL then packet = COMMON_HEADER
    elseif t == RPC_UNKNOWN_SINCE then packet = UNKNOWN_SINCE_LENGTH
    elseif t == CUTOFFS then packet = CUTOFFS_LENGTH
    end
    local sealed = packet and (at + packet + PSP_ICV) or len
    if sealed > len then sealed = len end
    if sealed - PSP_ICV > at + clear then
        tree:add(f.psp_ciphertext, tvb(at + clear, sealed - PSP_ICV - at - clear))
    end
    tree:add(f.psp_icv, tvb(sealed - PSP_ICV, PSP_ICV))
    return info, (packet and sealed < len) and sealed or nil
end

function homa.dissector(tvb, pinfo, root)
    local len = tvb:len()
    pinfo.cols.protocol = "Homa"
    if len >= 1 and tvb(0, 1):uint() == PSP_NEXT_HEADER then
        local start, first, n = 0, nil, 0
        while start < len do
            local info, size = dissect_sealed(tvb(start, len - start):tvb(), root)
            first = first or info
            n = n + 1
            if not size then break end
            start = start + size
        end
        pinfo.cols.info = n > 1 and string.format("%s [%d sealed segments]", first, n) or first
        return len
    end
    local size = len >= COMMON_HEADER and tvb(0, 2):uint() == MAGIC and tvb(2, 1):uint() == VERSION
        and segment_size(tvb, len)
    if not size then
        pinfo.cols.info = dissect_packet(tvb, root)
        return len
    end
    local segments = math.ceil(len / size)
    local first, first_tree
    for k = 0, segments - 1 do
        local start = k * size
        local info, tree = dissect_packet(tvb(start, math.min(size, len - start)):tvb(), root)
        if k == 0 then first, first_tree = info, tree end
    end
    local gso = first_tree:add(f.gso_segments, segments):set_generated()
    first_tree:add(f.gso_segment_size, size):set_generated()
    gso:add_proto_expert_info(e.gso, string.format("%d segments of %d bytes in one datagram", segments, size))
    local last_start = (segments - 1) * size
    local last_offset = len - last_start >= DATA_HEADER and tvb(last_start + 3, 1):uint() == DATA
        and tostring(tvb(last_start + 20, 4):uint()) or "-"
    pinfo.cols.info = string.format("%s [GSO: %d segments, last off=%s]", first, segments, last_offset)
    return len
end

local function heuristic(tvb, pinfo, root)
    local sealed = tvb:len() >= PSP_HEADER + COMMON_HEADER + PSP_ICV and tvb(0, 1):uint() == PSP_NEXT_HEADER
        and tvb(1, 1):uint() == 0 and bit.band(tvb(3, 1):uint(), 0xC3) == 0x01
        and tvb(PSP_HEADER, 2):uint() == MAGIC
    if not sealed and (tvb:len() < COMMON_HEADER or tvb(0, 2):uint() ~= MAGIC or tvb(2, 1):uint() ~= VERSION) then
        return false
    end
    homa.dissector(tvb, pinfo, root)
    return true
end
homa:register_heuristic("udp", heuristic)

-- The port range can change at run time (Edit > Preferences > Protocols > HOMA, or -o homa.ports:...).
local udp_port = DissectorTable.get("udp.port")
local registered_ports = ""
local function register_ports()
    local ports = tostring(homa.prefs.ports or "")
    if ports == registered_ports then return end
    if registered_ports ~= "" then udp_port:remove(registered_ports, homa) end
    if ports ~= "" then udp_port:add(ports, homa) end
    registered_ports = ports
end
homa.prefs_changed = register_ports
register_ports()
udp_port:add_for_decode_as(homa)
