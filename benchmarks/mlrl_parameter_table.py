"""Print the parameters of mlrl-boomer's BoomerClassifier with the values and options it accepts.

The output is the ``MLRL_BOOMER_PARAMETERS`` literal of ``tests/test_parameter_audit.py``
(regenerate it after upgrading the reference). Run with the Python that has mlrl-boomer,
bounded in memory and time (it only inspects the parameter declarations; nothing is fitted):

    ulimit -v 4000000; timeout 120 /work/bench312/bin/python benchmarks/mlrl_parameter_table.py
"""

import inspect
import pprint


def parameter_table():
    """{parameter: None (numeric) or {value: sorted option names}} for BoomerClassifier."""
    from mlrl.boosting import BoomerClassifier
    from mlrl.boosting.config.parameters import BOOMER_CLASSIFIER_PARAMETERS
    from mlrl.boosting.cython.learner_boomer import BoomerClassifierConfig
    from mlrl.common.config.parameters import NominalParameter

    names = [p for p in inspect.signature(BoomerClassifier.__init__).parameters if p != "self"]
    declared = {p.name: p for p in BOOMER_CLASSIFIER_PARAMETERS}
    table = {}
    for name in names:
        param = declared.get(name)
        if not isinstance(param, NominalParameter):
            table[name] = None  # numeric (or not declared as a nominal parameter)
            continue
        values = {}
        for value in param.values.values():
            if issubclass(BoomerClassifierConfig, value.mixin):
                values[str(getattr(value.name, "value", value.name))] = sorted(value.options or ())
        table[name] = dict(sorted(values.items()))
    return table


if __name__ == "__main__":
    print("MLRL_BOOMER_PARAMETERS = " + pprint.pformat(parameter_table(), width=96,
                                                       sort_dicts=False))
