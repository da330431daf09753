"""The machine model (:mod:`.model`), its detection (:mod:`.detect`) and the sizes
derived from it (:mod:`.rules`). A leaf package: it imports nothing else of polyc but
its errors."""
from polyc.machine.detect import host_brand, host_features, host_fingerprint, host_machine
from polyc.machine.model import NAMED_MACHINES, Machine, machine_from_dict, named_machine

__all__ = ["Machine", "NAMED_MACHINES", "host_brand", "host_features", "host_fingerprint",
           "host_machine", "machine_from_dict", "named_machine"]
