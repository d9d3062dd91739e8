"""Parameter-efficient fine-tuning: a frozen encoder, a few trained variables per task.

    method      what a method is (PeftMethod: settings, flags, insert, trains, fold) and the
                settings every method shares (PeftSettings: train_pooler, the record's fields)
    <method>    one module per method, its settings and its row: adapters (Houlsby), lora,
                bitfit (bias terms), frozen (the head alone trains: feature-based, linear
                probe), and every other row of the table
    methods     METHODS, the table (a new method is a module and one line there); from_flags;
                apply(model, settings): what is inserted, what trains
    artifact    a run's record (peft_config.json: base fingerprint, task), loading its base,
                restoring any fine-tuning output
    adaptation  the seam (official/adaptation.py): the run's adapt hook and record, and
                reconciling the flags with an output_dir
    merging     a run folded into the base's matrices (exports, convert_checkpoint)
    kind        PEFT's row of the adaptation kinds' table (official/adaptation_kinds.py): every
                method's flags and --peft_train_pooler, the settings they ask for, resolve

The layers a method inserts are official/modeling/'s (each names its own variables in the
checkpoints' table: official/modeling/insertion.py); the checkpoints of a PEFT run (its trained
variables alone) are official/checkpoints/training.py's.
"""
