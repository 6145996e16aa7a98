package naming

// Call parking is mod_valet_parking's: each tenant has one lot, ParkLot;
// its slots are ParkSlotMin…ParkSlotMax.
const (
	ParkSlotMin = 1
	ParkSlotMax = 20
	// ParkPresencePrefix is valet's presence prefix: a phone subscribed to
	// park+<slot>@<domain> sees the slot (Holding when occupied), one
	// subscribed to park+<lot name> the whole lot.
	ParkPresencePrefix = "park+"
)

// ParkLot is tenant's valet lot name, "<tenant>_lot@<domain>". Valet sends
// its presence (park+<slot>, park+<tenant>_lot) for the domain after '@',
// which must be the SIP domain the phones subscribe on; "<tenant>_lot" is
// unique per tenant (tenant names hold no '@').
func ParkLot(tenant, domain string) string {
	return tenant + "_lot@" + domain
}
