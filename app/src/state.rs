//! The state the views share: what is shown, the page's controls, and the
//! linked selection and hover. Every piece is a signal or stored value, so
//! the structs are `Copy` and handed to views by value.

use std::rc::Rc;
use std::sync::Arc;

use leptos::prelude::*;
use microarena_core::plan::PlannerKind;
use microarena_core::report::Report;
use microarena_core::report::budget::{DEFAULT_HEADROOM_BP, MCU_PRESETS};
use microarena_core::report::steps::Steps;
use microarena_core::tflm::profile::CORTEX_M;
use microarena_view::inputs::GraphInput;
use microarena_view::protocol::Extras;
use microarena_view::window::ScopeWindow;

/// What is on screen: a report, from a model or from a share link.
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    /// The report, shared by every view (never deep-copied per render).
    pub report: Arc<Report>,
    /// Opened from a share link (no model: selectors cannot re-plan).
    pub shared: bool,
    /// The bundled example.
    pub example: bool,
    /// The model's inputs as converted (empty for a share link).
    pub inputs: Vec<GraphInput>,
}

/// The linked selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sel {
    /// A head buffer (index into `report.buffers`).
    Buffer(usize),
    /// An operator (index into `report.operators`).
    Op(usize),
}

/// What the tooltip shows, at client coordinates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Hover {
    /// A head buffer (index into `report.buffers`).
    Buffer(usize, f64, f64),
    /// A tail variable (index into `report.variables`).
    Variable(usize, f64, f64),
    /// An operator (index into `report.operators`).
    Op(usize, f64, f64),
}

/// Selection and hover, linked across the charts and the table (context).
#[derive(Debug, Clone, Copy)]
pub struct Pointer {
    /// The selected buffer or op.
    pub sel: RwSignal<Option<Sel>>,
    /// What the pointer is over.
    pub hover: RwSignal<Option<Hover>>,
}

impl Pointer {
    /// The pointer state of the enclosing app.
    pub fn get() -> Pointer {
        expect_context::<Pointer>()
    }
}

/// The step-through: its steps (once asked for) and where the scrubber is
/// (context: the map, lifetimes and per-op bars draw the current step).
#[derive(Debug, Clone, Copy)]
pub struct Stepper {
    /// The steps of the report on screen, once the worker sent them.
    pub steps: RwSignal<Option<Arc<Steps>>>,
    /// The current step.
    pub at: RwSignal<usize>,
    /// The steps were asked for and have not arrived.
    pub loading: RwSignal<bool>,
    /// Why there are none.
    pub error: RwSignal<Option<String>>,
}

impl Stepper {
    /// No steps yet.
    pub fn new() -> Stepper {
        Stepper {
            steps: RwSignal::new(None),
            at: RwSignal::new(0),
            loading: RwSignal::new(false),
            error: RwSignal::new(None),
        }
    }

    /// Forgets the steps (a new report is shown).
    pub fn reset(&self) {
        self.steps.set(None);
        self.at.set(0);
        self.loading.set(false);
        self.error.set(None);
    }

    /// The steps and the current step, while the step-through is open.
    pub fn current(&self) -> Option<(Arc<Steps>, usize)> {
        let s = self.steps.get()?;
        let at = self.at.get().min(s.steps.len().saturating_sub(1));
        Some((s, at))
    }

    /// The step-through of the enclosing app, if any.
    pub fn get() -> Option<Stepper> {
        use_context::<Stepper>()
    }
}

impl Default for Stepper {
    fn default() -> Stepper {
        Stepper::new()
    }
}

/// What the compare panel puts beside the report on screen.
#[derive(Debug, Clone)]
pub enum CompareWith {
    /// The same model (and what-if) on another target.
    Target(String),
    /// The model `optimize` writes from it.
    Optimized,
    /// Another model file: name and bytes.
    Model(String, Vec<u8>),
}

/// The other side of a comparison (context).
#[derive(Debug, Clone, Copy)]
pub struct Comparison {
    /// The report beside the one on screen.
    pub other: RwSignal<Option<Arc<Report>>>,
    /// What is being computed, while it is.
    pub busy: RwSignal<Option<String>>,
    /// Why there is no other side.
    pub error: RwSignal<Option<String>>,
}

impl Comparison {
    /// Nothing compared.
    pub fn new() -> Comparison {
        Comparison {
            other: RwSignal::new(None),
            busy: RwSignal::new(None),
            error: RwSignal::new(None),
        }
    }

    /// Forgets the other side (the report on screen changed).
    pub fn reset(&self) {
        self.other.set(None);
        self.busy.set(None);
        self.error.set(None);
    }

    /// The comparison of the enclosing app.
    pub fn get() -> Comparison {
        expect_context::<Comparison>()
    }
}

impl Default for Comparison {
    fn default() -> Comparison {
        Comparison::new()
    }
}

/// The guided tour: the lesson shown, if any (context).
#[derive(Debug, Clone, Copy)]
pub struct Tour(pub RwSignal<Option<usize>>);

impl Tour {
    /// The tour of the enclosing app.
    pub fn get() -> Tour {
        expect_context::<Tour>()
    }
}

/// The scope window the lifetimes and per-op bars show (context, one per
/// report on screen); the overview strip moves it.
#[derive(Debug, Clone, Copy)]
pub struct Window(pub RwSignal<ScopeWindow>);

impl Window {
    /// The window of the enclosing dashboard.
    pub fn get() -> Window {
        expect_context::<Window>()
    }
}

/// What the budget panel's fields hold (KiB, except the headroom in %).
#[derive(Debug, Clone, Copy)]
pub struct BudgetInputs {
    /// Device preset name, or `custom` for typed-in RAM.
    pub device: RwSignal<String>,
    /// RAM of the custom device.
    pub custom_kib: RwSignal<u64>,
    /// Main stack.
    pub stack: RwSignal<u64>,
    /// RTOS.
    pub rtos: RwSignal<u64>,
    /// Interrupt stack.
    pub isr: RwSignal<u64>,
    /// DMA buffers.
    pub dma: RwSignal<u64>,
    /// Log buffers.
    pub log: RwSignal<u64>,
    /// Headroom in percent.
    pub headroom: RwSignal<u64>,
    /// Flash of a device without on-chip flash (or a custom one).
    pub custom_flash_kib: RwSignal<u64>,
    /// Firmware code and read-only data sharing the flash with the model.
    pub code_kib: RwSignal<u64>,
    /// The firmware's `MICROARENA-REPORT` output, as pasted or dropped.
    pub measured: RwSignal<String>,
    /// The firmware's ELF (file name, bytes), as opened or dropped: the layout it was linked
    /// with (`report::elf`, what `check --elf` reads).
    pub measured_elf: RwSignal<Option<(String, std::sync::Arc<[u8]>)>>,
    /// Take the minimum arena from the device's high-water, not the model.
    pub measured_device_minimum: RwSignal<bool>,
}

impl BudgetInputs {
    /// The first preset and typical reserves of a small RTOS firmware.
    pub fn new() -> BudgetInputs {
        BudgetInputs {
            device: RwSignal::new(MCU_PRESETS[0].name.to_string()),
            custom_kib: RwSignal::new(256),
            stack: RwSignal::new(8),
            rtos: RwSignal::new(16),
            isr: RwSignal::new(2),
            dma: RwSignal::new(4),
            log: RwSignal::new(1),
            headroom: RwSignal::new(u64::from(DEFAULT_HEADROOM_BP / 100)),
            custom_flash_kib: RwSignal::new(2048),
            code_kib: RwSignal::new(128),
            measured: RwSignal::new(String::new()),
            measured_elf: RwSignal::new(None),
            measured_device_minimum: RwSignal::new(false),
        }
    }
}

impl Default for BudgetInputs {
    fn default() -> BudgetInputs {
        BudgetInputs::new()
    }
}

/// A model file the page holds: name and bytes (kept for re-planning).
pub type ModelFile = (String, Rc<Vec<u8>>);

/// The app's state.
#[derive(Debug, Clone, Copy)]
pub struct AppState {
    /// The report on screen.
    pub shown: RwSignal<Option<Arc<Shown>>>,
    /// Why nothing (new) is shown.
    pub error: RwSignal<Option<String>>,
    /// What is being done, while it is.
    pub busy: RwSignal<Option<String>>,
    /// Selected target profile name.
    pub target: RwSignal<String>,
    /// Selected planner name.
    pub planner: RwSignal<String>,
    /// The budget panel's inputs, kept across re-plans (choosing a device
    /// re-plans for its target).
    pub budget: BudgetInputs,
    /// A file is dragged over the page.
    pub dragging: RwSignal<bool>,
    /// The arena map is rendered (one frame after the figures).
    pub map: RwSignal<bool>,
    /// The views below the map are rendered (one frame after it).
    pub rest: RwSignal<bool>,
    /// Planner comparison, share code and advice, which arrive just after the report.
    pub extras: RwSignal<Option<Arc<Extras>>>,
    /// The model file (name, bytes), kept for re-planning.
    pub model: StoredValue<Option<ModelFile>, LocalStorage>,
    /// When the current load or re-plan started (ms).
    pub started: StoredValue<f64>,
    /// What-if input shapes for the next request (`NAME=DIMS`, as the CLI's --input-shape).
    pub overrides: StoredValue<Vec<String>>,
    /// Why the last what-if could not be applied.
    pub whatif_error: RwSignal<Option<String>>,
    /// Selection and hover.
    pub pointer: Pointer,
    /// The step-through.
    pub stepper: Stepper,
    /// The comparison.
    pub comparison: Comparison,
}

impl AppState {
    /// Fresh state: the measured Cortex-M target (TFLM's reference kernels on
    /// an M4), TFLM's greedy planner, the first device preset, nothing shown.
    pub fn new() -> AppState {
        AppState {
            shown: RwSignal::new(None),
            error: RwSignal::new(None),
            busy: RwSignal::new(None),
            target: RwSignal::new(CORTEX_M.name.to_string()),
            planner: RwSignal::new(PlannerKind::TflmGreedy.name().to_string()),
            budget: BudgetInputs::new(),
            dragging: RwSignal::new(false),
            map: RwSignal::new(true),
            rest: RwSignal::new(true),
            extras: RwSignal::new(None),
            model: StoredValue::new_local(None),
            started: StoredValue::new(0.0),
            overrides: StoredValue::new(Vec::new()),
            whatif_error: RwSignal::new(None),
            pointer: Pointer {
                sel: RwSignal::new(None),
                hover: RwSignal::new(None),
            },
            stepper: Stepper::new(),
            comparison: Comparison::new(),
        }
    }
}

impl Default for AppState {
    fn default() -> AppState {
        AppState::new()
    }
}

/// What the dashboard's views need from the app besides the report.
#[derive(Clone, Copy)]
pub struct Controls {
    /// Selected target profile name.
    pub target: RwSignal<String>,
    /// Selected planner name.
    pub planner: RwSignal<String>,
    /// The budget panel's inputs.
    pub budget: BudgetInputs,
    /// Re-plans with the current target, planner and what-if.
    pub replan: Callback<()>,
    /// The arena map is rendered.
    pub map: RwSignal<bool>,
    /// The views below the map are rendered.
    pub rest: RwSignal<bool>,
    /// Planner comparison, share code and advice.
    pub extras: RwSignal<Option<Arc<Extras>>>,
    /// Re-plans with these what-if shapes (empty: the model as converted).
    pub apply_whatif: Callback<Vec<String>>,
    /// Why the last what-if could not be applied.
    pub whatif_error: RwSignal<Option<String>>,
    /// Asks the worker for the step-through of the report on screen.
    pub request_steps: Callback<()>,
    /// Asks the worker for the other side of a comparison.
    pub compare: Callback<CompareWith>,
}
