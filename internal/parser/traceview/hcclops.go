package traceview

import (
	"strings"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// hcclInfo is what an HCCL big op's name tells.
type hcclInfo struct {
	typ, hash, variant model.Sym
	set                bool
}

// hcclNames computes hcclInfo once per name id (n ids; later ones are
// computed each time).
type hcclNames struct {
	n     int
	infos []hcclInfo
	// an HCCL type depends only on the name up to its first digit (no
	// type has a digit), and names differ mostly in their digits
	types map[string]model.Sym
}

func (h *hcclNames) info(rd *reader, rank *model.Rank, id uint32) hcclInfo {
	if h.infos == nil {
		h.infos, h.types = make([]hcclInfo, h.n), map[string]model.Sym{}
	}
	if int(id) < len(h.infos) && h.infos[id].set {
		return h.infos[id]
	}
	name := rd.in.str(id)
	rd.ctrl.check(rd.in, id)
	cut := name
	if i := strings.IndexAny(name, "0123456789"); i >= 0 {
		cut = name[:i]
	}
	typ, ok := h.types[cut]
	if !ok {
		typ = rank.Intern(model.HCCLTypeFromName(cut))
		h.types[cut] = typ
	}
	hi := hcclInfo{typ, rank.Intern(model.HCCLHashSuffix(name)), rank.Intern(model.HCCLVariant(name)), true}
	if int(id) < len(h.infos) {
		h.infos[id] = hi
	}
	return hi
}
