"""Parameter-efficient fine-tuning: a frozen encoder, a few trained variables per task.

    method      what a method is (PeftMethod: settings, flags, insert, trains, fold) and the
                settings every method shares (PeftSettings: train_pooler, the record's fields)
    adapters    Houlsby adapters         lora    LoRA         bitfit    BitFit (bias terms)
    frozen      the frozen encoder: the head alone trains (feature-based, linear probe)
    methods     METHODS, the table (a new method is a module and one line there); from_flags;
                apply(model, settings): what is inserted, what trains
    artifact    a run's record (peft_config.json: base fingerprint, task), loading its base,
                restoring any fine-tuning output
    adaptation  the seam (official/adaptation.py): the run's adapt hook and record, and
                reconciling the flags with an output_dir
    merging     a run folded into the base's matrices (exports, convert_checkpoint)

The layers adapters and LoRA insert are official/modeling/adapter.py and lora.py; the checkpoints
of a PEFT run (its trained variables alone) are official/checkpoints/training.py's.
"""
