//! [`TileShape`]: the validated map and tile-grid geometry shared by the tiled ops; [`MapShape`]:
//! the map alone, for an op without tiles; and the parameter declarations that describe them.

use apex_plugin_api::{ParamSpec, Params, PluginError};

/// `F[B,C,H,W]` split into `t x t` tiles on a `Gh x Gw` grid, with `K` selection slots per batch row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TileShape {
    pub batch: usize,
    pub channels: usize,
    pub height: usize,
    pub width: usize,
    pub tile: usize,
    pub kmax: usize,
}

/// `F[B,C,H,W]` alone: the geometry of an op that works per pixel and has no tile grid
/// (FusionGate), so that its cases carry no tile parameter it would not use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MapShape {
    pub batch: usize,
    pub channels: usize,
    pub height: usize,
    pub width: usize,
}

impl MapShape {
    /// The map parameters, with the fixed-profile defaults.
    pub fn param_specs() -> [ParamSpec; 4] {
        [
            ParamSpec::int("batch", 1, "batch size B"),
            ParamSpec::int("channels", 128, "channels C"),
            ParamSpec::int(
                "height",
                128,
                "map height H (tiled ops: a multiple of tile_size)",
            ),
            ParamSpec::int(
                "width",
                128,
                "map width W (tiled ops: a multiple of tile_size)",
            ),
        ]
    }

    pub fn from_params(params: &Params) -> Result<Self, PluginError> {
        let shape = Self {
            batch: params.usize("batch")?,
            channels: params.usize("channels")?,
            height: params.usize("height")?,
            width: params.usize("width")?,
        };
        for (name, v) in [
            ("batch", shape.batch),
            ("channels", shape.channels),
            ("height", shape.height),
            ("width", shape.width),
        ] {
            if v == 0 {
                return Err(PluginError::invalid(format!(
                    "{name} = 0 (hint: set {name} >= 1)"
                )));
            }
        }
        // Device indexing uses 32-bit element counts per tensor (with 64-bit byte offsets).
        if shape.map_len() >= (1usize << 31) {
            return Err(PluginError::invalid(format!(
                "a map of {} elements exceeds the 2^31 limit (hint: reduce batch, channels or the map size)",
                shape.map_len()
            )));
        }
        Ok(shape)
    }

    /// Elements of one feature map `[B,C,H,W]`.
    pub fn map_len(&self) -> usize {
        self.batch * self.channels * self.height * self.width
    }
    /// Elements of one proxy / alpha map `[B,1,H,W]`.
    pub fn pixels(&self) -> usize {
        self.batch * self.height * self.width
    }
    /// The same map with one batch row.
    pub fn one_row(self) -> Self {
        Self { batch: 1, ..self }
    }
}

impl TileShape {
    /// The same geometry with one batch row.
    pub fn one_row(self) -> Self {
        Self { batch: 1, ..self }
    }
    /// The shape parameters every tiled op declares (the map's, then the tile grid's), with the
    /// fixed-profile defaults.
    pub fn param_specs() -> Vec<ParamSpec> {
        let mut specs = MapShape::param_specs().to_vec();
        specs.push(ParamSpec::int(
            "tile_size",
            8,
            "tile edge t in pixels (2..=64)",
        ));
        specs.push(ParamSpec::int(
            "kmax",
            32,
            "selection slots K per batch row",
        ));
        specs
    }

    pub fn from_params(params: &Params) -> Result<Self, PluginError> {
        let shape = Self {
            batch: params.usize("batch")?,
            channels: params.usize("channels")?,
            height: params.usize("height")?,
            width: params.usize("width")?,
            tile: params.usize("tile_size")?,
            kmax: params.usize("kmax")?,
        };
        shape.validate()?;
        Ok(shape)
    }

    fn validate(&self) -> Result<(), PluginError> {
        let t = self.tile;
        if !(2..=64).contains(&t) || !t.is_power_of_two() {
            return Err(PluginError::invalid(format!(
                "tile_size = {t} is not supported (hint: use a power of two from 2 to 64, e.g. 8, 16 or 32)"
            )));
        }
        for (name, v) in [
            ("batch", self.batch),
            ("channels", self.channels),
            ("kmax", self.kmax),
        ] {
            if v == 0 {
                return Err(PluginError::invalid(format!(
                    "{name} = 0 (hint: set {name} >= 1)"
                )));
            }
        }
        if self.height == 0
            || self.width == 0
            || !self.height.is_multiple_of(t)
            || !self.width.is_multiple_of(t)
        {
            return Err(PluginError::invalid(format!(
                "height x width = {}x{} is not a positive multiple of tile_size = {t} (hint: use multiples of {t})",
                self.height, self.width
            )));
        }
        // Device indexing uses 32-bit element counts per tensor (with 64-bit byte offsets).
        let largest = (self.map_len()).max(self.tiles_len());
        if largest >= (1usize << 31) {
            return Err(PluginError::invalid(format!(
                "a tensor of {largest} elements exceeds the 2^31 limit (hint: reduce batch, channels or the map size)"
            )));
        }
        Ok(())
    }

    pub fn grid_h(&self) -> usize {
        self.height / self.tile
    }
    pub fn grid_w(&self) -> usize {
        self.width / self.tile
    }
    /// Tiles on the grid, `G = Gh*Gw`.
    pub fn grid(&self) -> usize {
        self.grid_h() * self.grid_w()
    }
    /// Elements of one feature map `[B,C,H,W]`.
    pub fn map_len(&self) -> usize {
        self.batch * self.channels * self.height * self.width
    }
    /// Elements of one proxy / alpha map `[B,1,H,W]`.
    pub fn pixels(&self) -> usize {
        self.batch * self.height * self.width
    }
    /// Elements of the packed tensor `[B,K,C,t,t]`.
    pub fn tiles_len(&self) -> usize {
        self.batch * self.kmax * self.channels * self.tile * self.tile
    }
    /// Elements of one tile across all channels, `C*t*t`.
    pub fn tile_block(&self) -> usize {
        self.channels * self.tile * self.tile
    }
    /// Slots `B*K`.
    pub fn slots(&self) -> usize {
        self.batch * self.kmax
    }
    /// The grid origin `(y0, x0)` of a valid tile id.
    pub fn origin(&self, id: usize) -> (usize, usize) {
        (
            (id / self.grid_w()) * self.tile,
            (id % self.grid_w()) * self.tile,
        )
    }
    /// `[kmax, channels, height, width, tile]` as the reference kernels take them.
    pub fn dims_u32(&self) -> [u32; 5] {
        [self.kmax, self.channels, self.height, self.width, self.tile].map(|v| v as u32)
    }
    /// Whether `id` names a tile on the grid. Anything else (`-1`, `>= G`) is an empty slot.
    pub fn is_valid_id(&self, id: i32) -> bool {
        id >= 0 && (id as usize) < self.grid()
    }
}

#[cfg(test)]
pub(crate) fn params_for(
    shape: &TileShape,
    extra: &[(&str, apex_plugin_api::ParamValue)],
) -> Params {
    use apex_plugin_api::ParamValue::Int;
    let mut p = Params::default();
    p.push("batch", Int(shape.batch as i64));
    p.push("channels", Int(shape.channels as i64));
    p.push("height", Int(shape.height as i64));
    p.push("width", Int(shape.width as i64));
    p.push("tile_size", Int(shape.tile as i64));
    p.push("kmax", Int(shape.kmax as i64));
    for (name, value) in extra {
        p.push(name, value.clone());
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(t: usize, h: usize) -> TileShape {
        TileShape {
            batch: 1,
            channels: 4,
            height: h,
            width: h,
            tile: t,
            kmax: 4,
        }
    }

    #[test]
    fn grid_and_origins_follow_row_major_ids() {
        let s = shape(8, 32);
        assert_eq!((s.grid_h(), s.grid_w(), s.grid()), (4, 4, 16));
        assert_eq!(s.origin(5), (8, 8));
        assert_eq!(s.origin(15), (24, 24));
        assert!(s.is_valid_id(15) && !s.is_valid_id(16) && !s.is_valid_id(-1));
    }

    #[test]
    fn bad_geometry_is_rejected_with_a_hint() {
        let err = TileShape::from_params(&params_for(&shape(8, 30), &[])).unwrap_err();
        assert!(err.message.contains("multiple of tile_size"), "{err}");
        let err = TileShape::from_params(&params_for(&shape(6, 36), &[])).unwrap_err();
        assert!(err.message.contains("power of two"), "{err}");
    }
}
